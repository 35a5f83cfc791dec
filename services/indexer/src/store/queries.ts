/**
 * The read API's SQL, built from parsed parameters — pure, so each query's shape is tested
 * without a database, and the same text runs on PostgreSQL and PGlite. Every value travels
 * as a parameter; only fixed column names and operators are written into the text.
 */
import type { AttemptSearch, TailQuery, TimeRange, TimelineQuery } from '../api/params.js';
import type { Statement } from './write.js';

/**
 * A message's answer holds at most this many attempts — the newest, which decide its delivery
 * states — and at most this many per-source copies; the queries ask for one more to tell
 * whether any were left out (`truncated`).
 */
export const MESSAGE_DETAIL_LIMIT = 1000;

const ATTEMPT_FIELDS = `kafka_partition, kafka_offset, delivery_id, message_id, source_id, destination_id, message_type, user_id, anonymous_id,
  kind, attempt, outcome, lane, started_at, duration_ms, status, error, defer_reason, dead_reason, next_attempt_at, tier, received_at, replays, targets`;

const MESSAGE_FIELDS = 'seq, source_id, message_id, type, user_id, anonymous_id, event, received_at, event_timestamp, message, routing';

class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

/** Newest first, one more than asked for (to tell whether another page exists). */
export function attemptSearchSql(search: AttemptSearch): Statement {
  const p = new Params();
  const where = [`started_at >= ${p.add(search.since, '::bigint')}`, `started_at < ${p.add(search.until, '::bigint')}`];
  if (search.destination !== undefined) where.push(`destination_id = ${p.add(search.destination)}`);
  if (search.source !== undefined) where.push(`source_id = ${p.add(search.source)}`);
  if (search.userId !== undefined) where.push(`user_id = ${p.add(search.userId)}`);
  if (search.messageId !== undefined) where.push(`message_id = ${p.add(search.messageId)}`);
  const status = search.status;
  if (status?.kind === 'outcome') where.push(`outcome = ${p.add(status.outcome)}`);
  if (status?.kind === 'status') where.push(`status = ${p.add(status.status, '::integer')}`);
  if (status?.kind === 'class') where.push(`status >= ${p.add(status.from, '::integer')} AND status < ${p.add(status.to, '::integer')}`);
  // A request went out and no HTTP status came back: timeout, connection, TLS…
  if (status?.kind === 'error') where.push(`kind = 'attempt' AND status IS NULL`);
  if (search.cursor !== undefined) {
    const { startedAt, partition, offset } = search.cursor;
    where.push(`(started_at, kafka_partition, kafka_offset) < (${p.add(startedAt, '::bigint')}, ${p.add(partition, '::integer')}, ${p.add(offset, '::bigint')})`);
  }
  const text = `SELECT ${ATTEMPT_FIELDS} FROM attempts WHERE ${where.join(' AND ')}
    ORDER BY started_at DESC, kafka_partition DESC, kafka_offset DESC LIMIT ${p.add(search.limit + 1, '::integer')}`;
  return { text, params: p.values };
}

export function messageRowsSql(messageId: string): Statement {
  return { text: `SELECT ${MESSAGE_FIELDS} FROM messages WHERE message_id = $1 ORDER BY received_at, source_id LIMIT ${MESSAGE_DETAIL_LIMIT + 1}`, params: [messageId] };
}

/**
 * Oldest first, of the newest MESSAGE_DETAIL_LIMIT + 1: cut oldest-first, a message replayed
 * or sent to many destinations lost its latest attempts and showed stale delivery states.
 */
export function messageAttemptsSql(messageId: string): Statement {
  return {
    text: `SELECT * FROM (SELECT ${ATTEMPT_FIELDS} FROM attempts WHERE message_id = $1
      ORDER BY started_at DESC, kafka_partition DESC, kafka_offset DESC LIMIT ${MESSAGE_DETAIL_LIMIT + 1}) AS newest
      ORDER BY started_at, kafka_partition, kafka_offset`,
    params: [messageId],
  };
}

/** Newest first, only those indexed after the cursor. */
export function tailSql(query: TailQuery): Statement {
  const p = new Params();
  const where: string[] = [];
  if (query.source !== undefined) where.push(`source_id = ${p.add(query.source)}`);
  if (query.after !== undefined) where.push(`seq > ${p.add(query.after, '::bigint')}`);
  const text = `SELECT ${MESSAGE_FIELDS} FROM messages ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ${p.add(query.limit, '::integer')}`;
  return { text, params: p.values };
}

export const NEWEST_SEQ_SQL = 'SELECT COALESCE(MAX(seq), 0) AS seq FROM messages';

/**
 * Per destination over a time range: attempts (requests sent) and how they ended,
 * deferrals, dead letters, and the latency percentiles — delivery: the message's receipt to
 * the delivering attempt's end; attempt: one attempt's duration.
 */
export function summarySql(range: TimeRange, destinationId?: string): Statement {
  const p = new Params();
  const where = [`started_at >= ${p.add(range.since, '::bigint')}`, `started_at < ${p.add(range.until, '::bigint')}`];
  if (destinationId !== undefined) where.push(`destination_id = ${p.add(destinationId)}`);
  const text = `SELECT destination_id,
      COUNT(*) FILTER (WHERE kind = 'attempt')::integer AS attempts,
      COUNT(*) FILTER (WHERE kind = 'attempt' AND outcome = 'delivered')::integer AS delivered,
      COUNT(*) FILTER (WHERE kind = 'attempt' AND outcome <> 'delivered')::integer AS failed,
      COUNT(*) FILTER (WHERE kind = 'deferred')::integer AS deferred,
      COUNT(*) FILTER (WHERE outcome = 'dead')::integer AS dead_letters,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY started_at + duration_ms - received_at) FILTER (WHERE outcome = 'delivered') AS delivery_p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY started_at + duration_ms - received_at) FILTER (WHERE outcome = 'delivered') AS delivery_p95,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE kind = 'attempt') AS attempt_p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE kind = 'attempt') AS attempt_p95
    FROM attempts WHERE ${where.join(' AND ')} GROUP BY destination_id`;
  return { text, params: p.values };
}

/** Deliveries whose latest state waits on the retry ladder, per destination (now, whatever the range). */
export function waitingSql(destinationId?: string): Statement {
  const p = new Params();
  const where = [`state IN ('retrying', 'deferred')`];
  if (destinationId !== undefined) where.push(`destination_id = ${p.add(destinationId)}`);
  return { text: `SELECT destination_id, COUNT(*)::integer AS waiting FROM deliveries WHERE ${where.join(' AND ')} GROUP BY destination_id`, params: p.values };
}

/** Whether the log knows a destination at all (for a 404 on one neither configured nor seen). */
export function destinationSeenSql(destinationId: string): Statement {
  return { text: 'SELECT 1 AS seen FROM attempts WHERE destination_id = $1 LIMIT 1', params: [destinationId] };
}

/** Buckets that have rows; the caller fills the empty ones. */
export function timelineSql(query: TimelineQuery, destinationId: string): Statement {
  const p = new Params();
  const destination = p.add(destinationId);
  const since = p.add(query.since, '::bigint');
  const until = p.add(query.until, '::bigint');
  const origin = p.add(query.origin, '::bigint');
  const bucket = p.add(query.bucketMs, '::bigint');
  const text = `SELECT ((started_at - ${origin}) / ${bucket})::integer AS bucket,
      COUNT(*) FILTER (WHERE kind = 'attempt')::integer AS attempts,
      COUNT(*) FILTER (WHERE kind = 'attempt' AND outcome = 'delivered')::integer AS delivered,
      COUNT(*) FILTER (WHERE kind = 'attempt' AND outcome <> 'delivered')::integer AS failed,
      COUNT(*) FILTER (WHERE kind = 'deferred')::integer AS deferred,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY started_at + duration_ms - received_at) FILTER (WHERE outcome = 'delivered') AS delivery_p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY started_at + duration_ms - received_at) FILTER (WHERE outcome = 'delivered') AS delivery_p95
    FROM attempts WHERE destination_id = ${destination} AND started_at >= ${since} AND started_at < ${until}
    GROUP BY 1 ORDER BY 1`;
  return { text, params: p.values };
}

/** What retention deletes, oldest first within a bounded batch, by primary key. */
const RETENTION: Record<'attempts' | 'messages' | 'deliveries', { key: string; time: string }> = {
  attempts: { key: 'message_id, kafka_partition, kafka_offset', time: 'started_at' },
  messages: { key: 'seq', time: 'received_at' },
  deliveries: { key: 'source_id, delivery_id', time: 'updated_at' },
};

export type RetainedTable = keyof typeof RETENTION;

export const RETAINED_TABLES = Object.keys(RETENTION) as RetainedTable[];

export function retentionDeleteSql(table: RetainedTable, cutoff: number, batch: number): Statement {
  const { key, time } = RETENTION[table];
  return {
    text: `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${time} < $1::bigint LIMIT $2::integer)`,
    params: [cutoff, batch],
  };
}
