/**
 * A service's CPU priority, for the ones that run beside the delivery path rather than on it
 * (the indexer's INDEXER_NICE, the retry-scheduler's RETRY_SCHEDULER_NICE): work that can fall
 * behind for a while and catch up, on a machine it shares with ingest, the router and the
 * dispatchers, takes the CPU they leave. In a pod or VM of its own it changes nothing.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Logger } from './logger.js';

/**
 * Raises the niceness of every thread of this process to `nice` (never lowers it: that needs
 * privileges). On Linux niceness belongs to each thread, so the threads already running — the
 * libuv pool, V8's helpers — are set one by one; threads started later inherit it. `setting`
 * names the setting in the log line. Returns the niceness the process runs at.
 */
export function lowerPriority(nice: number, setting: string, logger: Logger): number {
  if (nice === 0) return getPriority();
  let threads: number[] = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    // Not Linux: the process as a whole.
  }
  try {
    for (const thread of threads) if (getPriority(thread) < nice) setPriority(thread, nice);
    logger.info({ nice: getPriority(), threads: threads.length }, `running at a lower CPU priority than the delivery path (${setting})`);
  } catch (error) {
    logger.warn({ err: error, nice }, `could not lower the CPU priority (${setting}); running as started`);
  }
  return getPriority();
}
