/**
 * One log line per key and interval for an event that can repeat once per delivery, instead of
 * a line each. A burst of 100,000 events to a dead destination ends in 100,000 `expired` dead
 * letters: a line apiece was most of a busy pipeline's log volume at the default level, and an
 * operator reads "destination X: 9,812 expired in the last 10 s" faster than 9,812 lines. Each
 * event is still in the delivery log and the metrics; the per-event line stays at `debug`.
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
}

export class LogTally {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LogTallyOptions) {}

  count(key: string, by = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }

  /** Logs every key counted since the last flush, one line each, and starts again from zero. */
  flush(): void {
    if (this.counts.size === 0) return;
    const { logger, message, context, keyField, intervalMs } = this.options;
    const counts = this.counts;
    this.counts = new Map();
    for (const [key, count] of counts) logger.info({ ...context, [keyField]: key, count, intervalMs }, message);
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
