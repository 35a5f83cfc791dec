/**
 * Where in a phase the trickle's worst latencies fell. A phase's p99 and maximum say how bad
 * the tail was, not when: a spike in the first seconds of a burst (a circuit opening, a new
 * code path compiling) and a tail spread over the whole burst call for different fixes. The
 * receiver reports a latency histogram per second of arrivals; this picks the worst of them.
 * Pure.
 */
import { LatencyHistogram, type HistogramJson } from './histogram.js';

export interface SecondWindow {
  fromMs: number;
  toMs: number;
  latency: HistogramJson;
}

export interface SlowSecond {
  /** Seconds from the phase's start to the window's start. */
  atSeconds: number;
  events: number;
  p99Ms: number;
  maxMs: number;
}

/** The `count` windows starting inside [fromMs, toMs) with the highest maximum latency, slowest first. */
export function slowestSeconds(windows: readonly SecondWindow[], fromMs: number, toMs: number, count = 3): SlowSecond[] {
  return windows
    .filter((window) => window.fromMs >= fromMs && window.fromMs < toMs && window.latency.count > 0)
    .map((window) => {
      const histogram = LatencyHistogram.fromJSON(window.latency);
      return { atSeconds: (window.fromMs - fromMs) / 1000, events: window.latency.count, p99Ms: histogram.percentile(99), maxMs: window.latency.maxMs };
    })
    .sort((a, b) => b.maxMs - a.maxMs)
    .slice(0, count);
}

/** `+12 s: 659 ms` for each, slowest first. */
export function slowestCell(seconds: readonly SlowSecond[] | undefined): string {
  if (!seconds || seconds.length === 0) return '–';
  return seconds.map((second) => `+${second.atSeconds.toFixed(0)} s: ${second.maxMs.toFixed(0)} ms`).join(', ');
}
