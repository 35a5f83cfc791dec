/**
 * Writing a group commit's chunks: all their rows in one database transaction, or — when the
 * database refuses the batch for what a record holds — record by record, setting the culprits
 * aside. What decides between retrying and setting aside is the failure (sql/client.ts): a
 * database or connection failure is retried by the caller for as long as it takes; anything
 * that is neither — a RangeError from serialising a record nesting thousands deep, say — is
 * the data's once the database is seen to answer, or one record would stop its partition, and
 * every chunk sharing its group commit, for good.
 */
import type { Logger, QuarantineCause } from '@tributary/shared';
import type { IndexerMetrics } from './metrics.js';
import { rowCount, rowsOf, type Mapped, type RawRecord } from './plan.js';
import { classifySqlError } from './sql/client.js';
import type { DeliveryLogStore } from './store/store.js';
import type { WriteCounts } from './store/write.js';

/** One partition's chunk, mapped, waiting for its group commit. */
export interface IndexChunk {
  topic: string;
  partition: number;
  mapped: Mapped[];
  /** The offset committed once the chunk is written. */
  nextOffset: string;
  records: number;
}

export type Refused = { topic: string; partition: number; raw: RawRecord; poison: QuarantineCause };

/** A write the database refused for a reason other than the data: retried, never skipped. */
export class DatabaseUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super(`the delivery log's database failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailable';
  }
}

export interface ChunkWriterOptions {
  store: Pick<DeliveryLogStore, 'write' | 'ping'>;
  metrics: Pick<IndexerMetrics, 'databaseErrors' | 'batchWriteDuration'>;
  logger: Logger;
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export class ChunkWriter {
  constructor(private readonly options: ChunkWriterOptions) {}

  /** Writes the chunks' rows in one transaction; on a data error, record by record, refusing the culprits. Throws DatabaseUnavailable to be retried. */
  async write(chunks: readonly IndexChunk[]): Promise<{ counts: WriteCounts; refused: Refused[] }> {
    const rows = rowsOf(chunks.flatMap(({ mapped }) => mapped));
    if (rowCount(rows) === 0) return { counts: { attempts: 0, messages: 0, deliveries: 0 }, refused: [] };
    try {
      return { counts: await this.timedWrite(rows), refused: [] };
    } catch (error) {
      await this.failIfUnavailable(error);
      this.options.metrics.databaseErrors.inc({ kind: 'data' });
      this.options.logger.warn({ err: error }, 'a batch could not be written for its data; writing it record by record');
    }
    const counts: WriteCounts = { attempts: 0, messages: 0, deliveries: 0 };
    const refused: Refused[] = [];
    for (const { topic, partition, mapped } of chunks) {
      for (const record of mapped) {
        if ('poison' in record) continue;
        try {
          const written = await this.timedWrite(rowsOf([record]));
          counts.attempts += written.attempts;
          counts.messages += written.messages;
          counts.deliveries += written.deliveries;
        } catch (error) {
          await this.failIfUnavailable(error);
          refused.push({ topic, partition, raw: record.raw, poison: { reason: 'unwritable', error: `could not write it: ${describe(error)}` } });
        }
      }
    }
    return { counts, refused };
  }

  /**
   * Throws DatabaseUnavailable unless `error` is the data's: a data SQLSTATE, or an error that
   * names no database failure while the database answers. Asking costs one `SELECT 1`, only on
   * a failure; without it, a driver's outage worded in a way classifySqlError does not know
   * would have every record of the batch quarantined.
   */
  private async failIfUnavailable(error: unknown): Promise<void> {
    const failure = classifySqlError(error);
    if (failure === 'data') return;
    if (failure === 'other') {
      try {
        await this.options.store.ping();
        return;
      } catch {
        // Falls through: the database does not answer, so the error may well be its.
      }
    }
    throw new DatabaseUnavailable(error);
  }

  private async timedWrite(rows: ReturnType<typeof rowsOf>): Promise<WriteCounts> {
    const finish = this.options.metrics.batchWriteDuration.startTimer();
    const counts = await this.options.store.write(rows);
    finish();
    return counts;
  }
}
