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
  /** The processes that used the most CPU while these deliveries were on their way, in cores (runs since 28 November 2026, evening). */
  busiest?: BusyProcess[];
}

/** One sampling interval of the phase: each process's CPU over it, in cores (1 = one core busy throughout). */
export interface CpuInterval {
  fromMs: number;
  toMs: number;
  cores: Record<string, number>;
}

/** The interval between two samples of every process's CPU seconds so far (taken at `at`, epoch ms). */
export function cpuInterval(from: { at: number; sample: ReadonlyMap<string, { cpuSeconds: number }> }, to: { at: number; sample: ReadonlyMap<string, { cpuSeconds: number }> }): CpuInterval {
  const seconds = Math.max(0.001, (to.at - from.at) / 1000);
  const cores: Record<string, number> = {};
  for (const [name, end] of to.sample) {
    const start = from.sample.get(name);
    if (start) cores[name] = Math.max(0, end.cpuSeconds - start.cpuSeconds) / seconds;
  }
  return { fromMs: from.at, toMs: to.at, cores };
}

export interface BusyProcess {
  name: string;
  cores: number;
}

/**
 * The `count` processes busiest over [fromMs, toMs), in cores, from the intervals overlapping
 * it (each weighted by its overlap). A slow second's deliveries were delayed before they
 * arrived, so the caller passes the second widened back by its slowest latency.
 */
export function busiestDuring(intervals: readonly CpuInterval[], fromMs: number, toMs: number, count = 3): BusyProcess[] {
  const cpuMs = new Map<string, number>();
  let coveredMs = 0;
  for (const interval of intervals) {
    const overlap = Math.min(toMs, interval.toMs) - Math.max(fromMs, interval.fromMs);
    if (overlap <= 0) continue;
    coveredMs += overlap;
    for (const [name, cores] of Object.entries(interval.cores)) cpuMs.set(name, (cpuMs.get(name) ?? 0) + cores * overlap);
  }
  if (coveredMs === 0) return [];
  return [...cpuMs]
    .map(([name, ms]) => ({ name, cores: ms / coveredMs }))
    .sort((a, b) => b.cores - a.cores)
    .slice(0, count);
}

/**
 * The `count` windows starting inside [fromMs, toMs) with the highest maximum latency, slowest
 * first; with `cpu`, each with the processes busiest while its deliveries were on their way.
 */
export function slowestSeconds(windows: readonly SecondWindow[], fromMs: number, toMs: number, count = 3, cpu?: readonly CpuInterval[]): SlowSecond[] {
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
      ...(cpu ? { busiest: busiestDuring(cpu, window.fromMs - window.latency.maxMs, window.toMs) } : {}),
    }));
}

/** `+12 s: 659 ms` for each, slowest first; with the busiest processes, `+12 s: 659 ms (router 0.82, broker 0.40)`. */
export function slowestCell(seconds: readonly SlowSecond[] | undefined): string {
  if (!seconds || seconds.length === 0) return '–';
  return seconds
    .map((second) => {
      const busy = second.busiest && second.busiest.length > 0 ? ` (${second.busiest.map(({ name, cores }) => `${name} ${cores.toFixed(2)}`).join(', ')})` : '';
      return `+${second.atSeconds.toFixed(0)} s: ${second.maxMs.toFixed(0)} ms${busy}`;
    })
    .join(', ');
}
