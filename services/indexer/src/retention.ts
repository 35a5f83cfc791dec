/**
 * DELIVERY_LOG_RETENTION, enforced: every interval, rows older than the retention are
 * deleted from each table in bounded batches, with a pause between batches so the writer
 * (and, on PGlite, the read API, which share its one connection) is never held up for long.
 * A failed sweep is logged and tried again at the next interval.
 */
import type { Logger } from '@tributary/shared';
import type { IndexerMetrics } from './metrics.js';
import type { RetainedTable } from './store/queries.js';

export interface RetentionOptions {
  store: { deleteExpired(cutoff: number, batch: number): Promise<Record<RetainedTable, number>> };
  retentionMs: number;
  logger: Logger;
  metrics: Pick<IndexerMetrics, 'retentionDeleted'>;
  intervalMs?: number;
  batchSize?: number;
  pauseMs?: number;
  now?: () => number;
}

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: RetentionOptions) {}

  start(): void {
    const { intervalMs = 60_000 } = this.options;
    const tick = () => {
      this.running = this.sweep()
        .then(() => undefined)
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'retention sweep failed; trying again at the next interval'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    // The first sweep soon after start: an indexer down for a while has catching up to do.
    this.timer = setTimeout(tick, Math.min(intervalMs, 5_000));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Deletes everything older than the retention; returns the rows deleted per table. */
  async sweep(): Promise<Record<RetainedTable, number>> {
    const { store, retentionMs, logger, metrics, batchSize = 5_000, pauseMs = 20, now = Date.now } = this.options;
    const cutoff = now() - retentionMs;
    const total: Record<string, number> = {};
    for (;;) {
      if (this.stopped) break;
      const deleted = await store.deleteExpired(cutoff, batchSize);
      let any = false;
      for (const [table, count] of Object.entries(deleted)) {
        total[table] = (total[table] ?? 0) + count;
        if (count > 0) metrics.retentionDeleted.inc({ table }, count);
        if (count >= batchSize) any = true;
      }
      if (!any) break;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    if (Object.values(total).some((count) => count > 0)) logger.info({ deleted: total, before: new Date(cutoff).toISOString() }, 'retention: old rows deleted');
    return total as Record<RetainedTable, number>;
  }
}
