/**
 * The statements that write a batch: each table's rows go in as one multi-row INSERT whose
 * columns travel as arrays (`INSERT … SELECT … FROM unnest($1::text[], …)`) — one statement
 * and a fixed number of parameters however many rows, which neither hits PostgreSQL's
 * 65,535-parameter limit nor needs a new plan per batch size. The arrays go in PostgreSQL's
 * binary format (binary-array.ts), not as text literals to be escaped and parsed back.
 * Conflicts make a write idempotent: attempts and messages are inserted once (`DO NOTHING`),
 * delivery states only move forward (`DO UPDATE … WHERE` newer), and a delivered state only
 * updates a delivery already held — the deliveries table holds those that did not succeed
 * at once.
 */
import type { AttemptRow, DeliveryRow, MessageRow } from '../rows.js';
import { binaryArray, type ArrayElement } from '../sql/binary-array.js';
import type { SqlExecutor } from '../sql/client.js';

export interface Statement {
  text: string;
  params: unknown[];
}

interface Column<R> {
  name: string;
  /** The array element type the column travels as. */
  type: 'text' | 'integer' | 'bigint' | 'json';
  value(row: R): unknown;
}

const ELEMENT_OF: Record<Column<never>['type'], ArrayElement> = { text: 'text', json: 'text', integer: 'int4', bigint: 'int8' };

/** Each column's values as one binary array; json travels as text (how both drivers pass a JSON document) and is cast per row. */
function columnArrays<R>(columns: readonly Column<R>[], rows: readonly R[]): Buffer[] {
  return columns.map((column) =>
    binaryArray(
      ELEMENT_OF[column.type],
      rows.map((row) => (column.type === 'json' ? JSON.stringify(column.value(row)) : column.value(row))),
    ),
  );
}

/** `INSERT INTO table (…) SELECT … FROM unnest(…) ORDER BY ordinality <conflict>`. Pure. */
export function unnestInsert<R>(table: string, columns: readonly Column<R>[], rows: readonly R[], conflict: string): Statement {
  const names = columns.map((column) => column.name);
  const arrays = columns.map((column, index) => `$${index + 1}::${column.type === 'json' ? 'text' : column.type}[]`);
  const selected = columns.map((column) => (column.type === 'json' ? `u.${column.name}::json` : `u.${column.name}`));
  const text =
    `INSERT INTO ${table} (${names.join(', ')}) ` +
    `SELECT ${selected.join(', ')} FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS u(${names.join(', ')}, ord) ORDER BY u.ord ` +
    conflict;
  return { text, params: columnArrays(columns, rows) };
}

const ATTEMPT_COLUMNS: readonly Column<AttemptRow>[] = [
  { name: 'kafka_partition', type: 'integer', value: (r) => r.partition },
  { name: 'kafka_offset', type: 'bigint', value: (r) => r.offset },
  { name: 'delivery_id', type: 'text', value: (r) => r.deliveryId },
  { name: 'message_id', type: 'text', value: (r) => r.messageId },
  { name: 'source_id', type: 'text', value: (r) => r.sourceId },
  { name: 'destination_id', type: 'text', value: (r) => r.destinationId },
  { name: 'message_type', type: 'text', value: (r) => r.messageType },
  { name: 'user_id', type: 'text', value: (r) => r.userId },
  { name: 'anonymous_id', type: 'text', value: (r) => r.anonymousId },
  { name: 'kind', type: 'text', value: (r) => r.kind },
  { name: 'attempt', type: 'integer', value: (r) => r.attempt },
  { name: 'outcome', type: 'text', value: (r) => r.outcome },
  { name: 'lane', type: 'text', value: (r) => r.lane },
  { name: 'started_at', type: 'bigint', value: (r) => r.startedAt },
  { name: 'duration_ms', type: 'integer', value: (r) => r.durationMs },
  { name: 'status', type: 'integer', value: (r) => r.status },
  { name: 'error', type: 'text', value: (r) => r.error },
  { name: 'defer_reason', type: 'text', value: (r) => r.deferReason },
  { name: 'dead_reason', type: 'text', value: (r) => r.deadReason },
  { name: 'next_attempt_at', type: 'bigint', value: (r) => r.nextAttemptAt },
  { name: 'tier', type: 'text', value: (r) => r.tier },
  { name: 'received_at', type: 'bigint', value: (r) => r.receivedAt },
  { name: 'replays', type: 'integer', value: (r) => r.replays },
  { name: 'targets', type: 'json', value: (r) => r.targets },
];

const MESSAGE_COLUMNS: readonly Column<MessageRow>[] = [
  { name: 'source_id', type: 'text', value: (r) => r.sourceId },
  { name: 'message_id', type: 'text', value: (r) => r.messageId },
  { name: 'type', type: 'text', value: (r) => r.type },
  { name: 'user_id', type: 'text', value: (r) => r.userId },
  { name: 'anonymous_id', type: 'text', value: (r) => r.anonymousId },
  { name: 'event', type: 'text', value: (r) => r.event },
  { name: 'received_at', type: 'bigint', value: (r) => r.receivedAt },
  { name: 'event_timestamp', type: 'bigint', value: (r) => r.timestamp },
  { name: 'message', type: 'json', value: (r) => r.message },
  { name: 'routing', type: 'json', value: (r) => r.routing },
  { name: 'kafka_partition', type: 'integer', value: (r) => r.partition },
  { name: 'kafka_offset', type: 'bigint', value: (r) => r.offset },
];

const DELIVERY_COLUMNS: readonly Column<DeliveryRow>[] = [
  { name: 'source_id', type: 'text', value: (r) => r.sourceId },
  { name: 'delivery_id', type: 'text', value: (r) => r.deliveryId },
  { name: 'message_id', type: 'text', value: (r) => r.messageId },
  { name: 'destination_id', type: 'text', value: (r) => r.destinationId },
  { name: 'user_id', type: 'text', value: (r) => r.userId },
  { name: 'received_at', type: 'bigint', value: (r) => r.receivedAt },
  { name: 'state', type: 'text', value: (r) => r.state },
  { name: 'attempts', type: 'integer', value: (r) => r.attempts },
  { name: 'first_attempt_at', type: 'bigint', value: (r) => r.firstAttemptAt },
  { name: 'last_attempt_at', type: 'bigint', value: (r) => r.lastAttemptAt },
  { name: 'next_attempt_at', type: 'bigint', value: (r) => r.nextAttemptAt },
  { name: 'last_status', type: 'integer', value: (r) => r.lastStatus },
  { name: 'last_error', type: 'text', value: (r) => r.lastError },
  { name: 'delivered_at', type: 'bigint', value: (r) => r.deliveredAt },
  { name: 'latency_ms', type: 'bigint', value: (r) => r.latencyMs },
  { name: 'updated_at', type: 'bigint', value: (r) => r.updatedAt },
  { name: 'last_partition', type: 'integer', value: (r) => r.lastPartition },
  { name: 'last_offset', type: 'bigint', value: (r) => r.lastOffset },
];

export const insertAttempts = (rows: readonly AttemptRow[]) => unnestInsert('attempts', ATTEMPT_COLUMNS, rows, 'ON CONFLICT (message_id, kafka_partition, kafka_offset) DO NOTHING');

export const insertMessages = (rows: readonly MessageRow[]) => unnestInsert('messages', MESSAGE_COLUMNS, rows, 'ON CONFLICT (source_id, message_id) DO NOTHING');

/** `UPDATE table … FROM unnest(…)`: the rows' values where the key matches and `condition` holds; nothing is inserted. Pure. */
export function unnestUpdate<R>(table: string, columns: readonly Column<R>[], rows: readonly R[], key: readonly string[], assignments: string, condition: string): Statement {
  const names = columns.map((column) => column.name);
  const arrays = columns.map((column, index) => `$${index + 1}::${column.type === 'json' ? 'text' : column.type}[]`);
  const text =
    `UPDATE ${table} SET ${assignments} FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')}) ` +
    `WHERE ${key.map((name) => `${table}.${name} = u.${name}`).join(' AND ')} AND (${condition})`;
  return { text, params: columnArrays(columns, rows) };
}

/**
 * States from attempts replace a stored state only when they come from a later record: a
 * later offset of the same partition (where a delivery's records sit, in order), or — should
 * the topic have been repartitioned — a later start. A record indexed again changes nothing.
 */
export const upsertDeliveryStates = (rows: readonly DeliveryRow[]) =>
  unnestInsert(
    'deliveries',
    DELIVERY_COLUMNS,
    rows,
    `ON CONFLICT (source_id, delivery_id) DO UPDATE SET
      state = EXCLUDED.state,
      attempts = EXCLUDED.attempts,
      first_attempt_at = LEAST(deliveries.first_attempt_at, EXCLUDED.first_attempt_at),
      last_attempt_at = GREATEST(deliveries.last_attempt_at, EXCLUDED.last_attempt_at),
      next_attempt_at = EXCLUDED.next_attempt_at,
      last_status = EXCLUDED.last_status,
      last_error = EXCLUDED.last_error,
      delivered_at = COALESCE(EXCLUDED.delivered_at, deliveries.delivered_at),
      latency_ms = COALESCE(EXCLUDED.latency_ms, deliveries.latency_ms),
      updated_at = EXCLUDED.updated_at,
      last_partition = EXCLUDED.last_partition,
      last_offset = EXCLUDED.last_offset
    WHERE deliveries.last_offset IS NULL
      OR (deliveries.last_partition = EXCLUDED.last_partition AND EXCLUDED.last_offset > deliveries.last_offset)
      OR (deliveries.last_partition <> EXCLUDED.last_partition AND EXCLUDED.updated_at > deliveries.updated_at)`,
  );

/**
 * A delivered state only updates a delivery already held (one that failed before): a
 * delivery that succeeds at its first attempt — nearly all of them — writes no delivery row
 * at all, which saved a third of the indexer's writes. Same forward-only rule as above.
 */
export const updateDeliveredStates = (rows: readonly DeliveryRow[]) =>
  unnestUpdate(
    'deliveries',
    DELIVERY_COLUMNS,
    rows,
    ['source_id', 'delivery_id'],
    `state = u.state,
      attempts = u.attempts,
      first_attempt_at = LEAST(deliveries.first_attempt_at, u.first_attempt_at),
      last_attempt_at = GREATEST(deliveries.last_attempt_at, u.last_attempt_at),
      next_attempt_at = u.next_attempt_at,
      last_status = u.last_status,
      last_error = u.last_error,
      delivered_at = COALESCE(u.delivered_at, deliveries.delivered_at),
      latency_ms = COALESCE(u.latency_ms, deliveries.latency_ms),
      updated_at = u.updated_at,
      last_partition = u.last_partition,
      last_offset = u.last_offset`,
    `deliveries.last_offset IS NULL
      OR (deliveries.last_partition = u.last_partition AND u.last_offset > deliveries.last_offset)
      OR (deliveries.last_partition <> u.last_partition AND u.updated_at > deliveries.updated_at)`,
  );

/**
 * Of these delivered states, the keys the deliveries table holds (deliveries that failed
 * before): only they are updated. Nearly every delivered state is a first success that holds
 * nothing, and asking with two key arrays costs a fraction of sending all eighteen columns to
 * an UPDATE that matches no row.
 */
export function heldDeliveryKeys(rows: readonly DeliveryRow[]): Statement {
  return {
    text:
      'SELECT d.source_id, d.delivery_id FROM deliveries d ' +
      'JOIN unnest($1::text[], $2::text[]) AS u(source_id, delivery_id) ON d.source_id = u.source_id AND d.delivery_id = u.delivery_id',
    params: [binaryArray('text', rows.map((row) => row.sourceId)), binaryArray('text', rows.map((row) => row.deliveryId))],
  };
}

/** Transaction-scoped: writers that insert messages take turns, so the tail's `seq` commits in order. */
export const TAIL_LOCK_KEY = 0x7472696275746173n;

export interface RowsToWrite {
  attempts: AttemptRow[];
  messages: MessageRow[];
  /** From attempts, folded per delivery: the ones not delivered are held, a delivered one updates what is held. */
  states: DeliveryRow[];
}

export interface WriteCounts {
  attempts: number;
  messages: number;
  deliveries: number;
}

/** Writes one batch's rows within `tx` (the caller's transaction). */
export async function writeRows(tx: SqlExecutor, rows: RowsToWrite): Promise<WriteCounts> {
  const counts: WriteCounts = { attempts: 0, messages: 0, deliveries: 0 };
  const run = async (statement: Statement) => (await tx.query(statement.text, statement.params)).rowCount;
  if (rows.attempts.length > 0) counts.attempts = await run(insertAttempts(rows.attempts));
  if (rows.messages.length > 0) {
    // Without it, two writers' transactions could commit seq 11 before seq 10, and a tail
    // reader that has seen 11 would never see 10.
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [TAIL_LOCK_KEY.toString()]);
    counts.messages = await run(insertMessages(rows.messages));
  }
  const open = rows.states.filter((state) => state.state !== 'delivered');
  const delivered = rows.states.filter((state) => state.state === 'delivered');
  if (open.length > 0) counts.deliveries += await run(upsertDeliveryStates(open));
  if (delivered.length > 0) {
    const keys = heldDeliveryKeys(delivered);
    const { rows: held } = await tx.query<{ source_id: string; delivery_id: string }>(keys.text, keys.params);
    if (held.length > 0) {
      const heldKeys = new Set(held.map((row) => `${row.source_id}\u0000${row.delivery_id}`));
      counts.deliveries += await run(updateDeliveredStates(delivered.filter((state) => heldKeys.has(`${state.sourceId}\u0000${state.deliveryId}`))));
    }
  }
  return counts;
}
