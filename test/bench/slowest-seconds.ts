/**
 * Where in a phase the trickle's worst latencies fell. A phase's p99 and maximum say how bad
 * the tail was, not when: a spike in the first seconds of a burst (a circuit opening, a new
 * code path compiling) and a tail spread over the whole burst call for different fixes. The
 * receiver reports a latency histogram per second of arrivals; this picks the worst of them.
 * Pure.
 */
import { LatencyHistogram } from './histogram.js';
import type { ReceiverWindow } from './protocol.js';

/** What is kept of the receiver's report for one second. */
export type SecondWindow = Pick<ReceiverWindow, 'fromMs' | 'toMs' | 'latency'>;

export interface SlowSecond {
  /** Seconds from the phase's start to the window's start. */
  atSeconds: number;
  events: number;
  p99Ms: number;
  maxMs: number;
}

/** The `count` windows starting inside [fromMs, toMs) with the highest maximum latency, slowest first. */
export function slowestSeconds(windows: readonly SecondWindow[], fromMs: number, toMs: number, count = 3): SlowSecond[] {
  // Ranked by the maximum each window already carries; only the kept ones are read for a p99.
  return windows
    .filter((window) => window.fromMs >= fromMs && window.fromMs < toMs && window.latency.count > 0)
    .sort((a, b) => b.latency.maxMs - a.latency.maxMs)
    .slice(0, count)
    .map((window) => ({
      atSeconds: (window.fromMs - fromMs) / 1000,
      events: window.latency.count,
      p99Ms: LatencyHistogram.fromJSON(window.latency).percentile(99),
      maxMs: window.latency.maxMs,
    }));
}

/** `+12 s: 659 ms` for each, slowest first. */
export function slowestCell(seconds: readonly SlowSecond[] | undefined): string {
  if (!seconds || seconds.length === 0) return '–';
  return seconds.map((second) => `+${second.atSeconds.toFixed(0)} s: ${second.maxMs.toFixed(0)} ms`).join(', ');
}
