/** The indexer's CPU priority (INDEXER_NICE): it runs beside the delivery path, not on it. */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Logger } from '@tributary/shared';

/**
 * Raises the niceness of every thread of this process to `nice` (never lowers it: that needs
 * privileges). On Linux niceness belongs to each thread, so the threads already running — the
 * libuv pool, V8's helpers — are set one by one; threads started later inherit it.
 */
export function lowerPriority(nice: number, logger: Logger): void {
  if (nice === 0) return;
  let threads: number[] = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    // Not Linux: the process as a whole.
  }
  try {
    for (const thread of threads) if (getPriority(thread) < nice) setPriority(thread, nice);
    logger.info({ nice: getPriority(), threads: threads.length }, 'running at a lower CPU priority than the delivery path (INDEXER_NICE)');
  } catch (error) {
    logger.warn({ err: error, nice }, 'could not lower the CPU priority (INDEXER_NICE); running as started');
  }
}
