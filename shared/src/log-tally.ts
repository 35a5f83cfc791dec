/**
 * One log line per key and interval for an event that can repeat once per delivery, instead of
 * a line each. A burst of 100,000 events to a dead destination ends in 100,000 `expired` dead
 * letters: a line apiece was most of a busy pipeline's log volume at the default level, and an
 * operator reads "destination X: 9,812 expired in the last 10 s" faster than 9,812 lines. Each
 * event is still in the delivery log and the metrics; the per-event line stays at `debug`.
 *
 * With a budget, the first events of each key in an interval are still logged one by one (the
 * caller asks `count`), and the summary says how many were not: a destination failing now and
 * then keeps a line per failure, one failing at a thousand a second costs a few lines.
 */
import type { Logger } from './logger.js';

export interface LogTallyOptions {
  logger: Logger;
  /** The summary line's message. */
  message: string;
  /** Fields every summary line carries besides the key's own (a tier, a reason). */
  context?: Record<string, unknown>;
  /** The key's field name in the line, e.g. `destinationId`. */
  keyField: string;
  intervalMs: number;
  /** Events of one key logged one by one in each interval before they are only counted. Default 0. */
  budget?: number;
}

export class LogTally {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LogTallyOptions) {}

  /** Counts `by` events of `key`; true if the caller should still log this one itself (within the budget). */
  count(key: string, by = 1): boolean {
    const counted = this.counts.get(key) ?? 0;
    this.counts.set(key, counted + by);
    return counted + by <= (this.options.budget ?? 0);
  }

  /**
   * Logs every key with events past its budget since the last flush, one line each (`count`:
   * all of them, `notLogged`: those past the budget), and starts again from zero.
   */
  flush(): void {
    if (this.counts.size === 0) return;
    const { logger, message, context, keyField, intervalMs, budget = 0 } = this.options;
    const counts = this.counts;
    this.counts = new Map();
    for (const [key, count] of counts) {
      if (count > budget) logger.info({ ...context, [keyField]: key, count, notLogged: count - budget, intervalMs }, message);
    }
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.options.intervalMs);
    // A summary is never a reason to keep the process alive.
    this.timer.unref();
  }

  /** Stops the timer and logs what is left. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
