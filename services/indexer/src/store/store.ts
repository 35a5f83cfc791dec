/**
 * The delivery log over one `SqlClient`: writing a batch in one transaction, the read API's
 * queries, and retention. The statements come from write.ts and queries.ts; this is where
 * they meet the database.
 */
import { encodeAttemptCursor, encodeTailCursor } from '../api/cursor.js';
import { attemptJson, deliveriesOf, deliveryJson, messageDetailJson, summaryJson, tailMessageJson, timelineJson } from '../api/json.js';
import type { AttemptDbRow, MessageDbRow, SummaryDbRow, TimelineDbRow } from '../api/json.js';
import type { AttemptSearch, TailQuery, TimeRange, TimelineQuery } from '../api/params.js';
import type { SqlClient, SqlExecutor } from '../sql/client.js';
import { migrate } from './migrations.js';
import {
  attemptSearchSql,
  destinationSeenSql,
  MESSAGE_DETAIL_LIMIT,
  messageAttemptsSql,
  messageRowsSql,
  NEWEST_SEQ_SQL,
  RETAINED_TABLES,
  retentionDeleteSql,
  summarySql,
  tailSql,
  timelineSql,
  waitingSql,
  type RetainedTable,
} from './queries.js';
import { writeRows, type RowsToWrite, type Statement, type WriteCounts } from './write.js';

const run = <R extends object>(db: SqlExecutor, statement: Statement) => db.query<R>(statement.text, statement.params);

export class DeliveryLogStore {
  constructor(readonly db: SqlClient) {}

  migrate(): Promise<number[]> {
    return migrate(this.db);
  }

  /** One transaction: all of the batch's rows, or none. */
  write(rows: RowsToWrite): Promise<WriteCounts> {
    return this.db.transaction((tx) => writeRows(tx, rows));
  }

  /** Whether the database answers at all: how a failed write that names no database failure is told from one caused by the data. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /** "What happened to message X"; undefined when the log knows nothing of it. */
  async message(messageId: string) {
    const [messages, attempts] = [await run<MessageDbRow>(this.db, messageRowsSql(messageId)), await run<AttemptDbRow>(this.db, messageAttemptsSql(messageId))];
    if (messages.rows.length === 0 && attempts.rows.length === 0) return undefined;
    // Each query asks for one row more than is answered; attempts come oldest first, so the
    // extra one is the oldest.
    const truncated = messages.rows.length > MESSAGE_DETAIL_LIMIT || attempts.rows.length > MESSAGE_DETAIL_LIMIT;
    const messageRows = messages.rows.slice(0, MESSAGE_DETAIL_LIMIT);
    const attemptRows = attempts.rows.slice(-MESSAGE_DETAIL_LIMIT);
    return {
      messageId,
      messages: messageRows.map(messageDetailJson),
      routing: messageRows.flatMap((row) => row.routing),
      deliveries: deliveriesOf(messageRows, attemptRows).map(deliveryJson),
      attempts: attemptRows.map(attemptJson),
      // Only when true: the documented answer (admin.yaml) has no such field otherwise.
      ...(truncated ? { truncated: true as const } : {}),
    };
  }

  async attempts(search: AttemptSearch) {
    const { rows } = await run<AttemptDbRow>(this.db, attemptSearchSql(search));
    const page = rows.slice(0, search.limit);
    const last = page.at(-1);
    const more = rows.length > search.limit && last !== undefined;
    return {
      attempts: page.map(attemptJson),
      nextCursor: more ? encodeAttemptCursor({ startedAt: last.started_at, partition: last.kafka_partition, offset: last.kafka_offset }) : null,
    };
  }

  async tail(query: TailQuery) {
    const { rows } = await run<MessageDbRow>(this.db, tailSql(query));
    let newest = rows[0]?.seq ?? query.after;
    if (newest === undefined) newest = (await this.db.query<{ seq: number }>(NEWEST_SEQ_SQL)).rows[0]?.seq ?? 0;
    return { messages: rows.map(tailMessageJson), cursor: encodeTailCursor(newest) };
  }

  /** Summaries of these destinations (the configured ones), in their order. */
  async summaries(destinationIds: readonly string[], range: TimeRange) {
    const [stats, waiting] = [await run<SummaryDbRow>(this.db, summarySql(range)), await run<{ destination_id: string; waiting: number }>(this.db, waitingSql())];
    const statsBy = new Map(stats.rows.map((row) => [row.destination_id, row]));
    const waitingBy = new Map(waiting.rows.map((row) => [row.destination_id, row.waiting]));
    return destinationIds.map((id) => summaryJson(id, range, statsBy.get(id), waitingBy.get(id) ?? 0));
  }

  async summary(destinationId: string, range: TimeRange) {
    const [stats, waiting] = [
      await run<SummaryDbRow>(this.db, summarySql(range, destinationId)),
      await run<{ destination_id: string; waiting: number }>(this.db, waitingSql(destinationId)),
    ];
    return summaryJson(destinationId, range, stats.rows[0], waiting.rows[0]?.waiting ?? 0);
  }

  async destinationSeen(destinationId: string): Promise<boolean> {
    return (await run(this.db, destinationSeenSql(destinationId))).rows.length > 0;
  }

  async timeline(destinationId: string, query: TimelineQuery) {
    const { rows } = await run<TimelineDbRow>(this.db, timelineSql(query, destinationId));
    return timelineJson(destinationId, query, rows);
  }

  /**
   * Deletes one bounded batch of rows older than `cutoff` from each table; the caller
   * repeats while anything was deleted, so no statement holds locks (or PGlite) for long.
   */
  async deleteExpired(cutoff: number, batch: number): Promise<Record<RetainedTable, number>> {
    const deleted = {} as Record<RetainedTable, number>;
    for (const table of RETAINED_TABLES) deleted[table] = (await run(this.db, retentionDeleteSql(table, cutoff, batch))).rowCount;
    return deleted;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
