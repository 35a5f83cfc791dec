/**
 * Dead letters for operators: listing them and replaying them to the retry lane
 * (`<namespace>.deliveries.retries.v1`) with a fresh retry window — the retry lane, so that a
 * replay of thousands never queues in front of first attempts. The admin API (ingest) calls this; the CLI wraps the admin API.
 *
 * A dead letter is identified by its place on the dead-letter topic, `<partition>/<offset>`.
 * Replaying one writes its delivery back to the retry lane and a marker under that key
 * to `<namespace>.dlq-replays.v1`, in one transaction: running the same replay again finds
 * the markers and skips what was already replayed, and a crash leaves either both or
 * neither. A delivery that dies again after its replay is a new dead letter, replayable in
 * its turn.
 *
 * Every replay, from any ingest replica, uses the one transactional id
 * `<namespace>-dlq-replay` and registers it before reading the markers. Registering fences
 * a replay still running elsewhere (its commit fails) and finishes any transaction of the
 * previous holder, so the markers read afterwards include every replay that committed:
 * two replays at once cannot both send the same dead letter.
 *
 * Reads stop at the end offsets the topics had when the call began (read_committed), so a
 * call never waits for records written after it started.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Transaction } from 'kafkajs';
import type { DeadLetter, DeadLetterReason, DeadLetterReplay, Delivery, TopicNames } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import { parseDuration } from './duration.js';
import { createProducer } from './kafka.js';
import type { Logger } from './logger.js';
import { CompactedTopicReader } from './table.js';
import { KeepNewest, scanTopic, withTimeout } from './topic-scan.js';
import { sendInChunks } from './transactions.js';

/** Every reason a delivery is dead-lettered for; typed so that a new reason must be described here. */
export const DEAD_LETTER_REASONS: Readonly<Record<DeadLetterReason, string>> = {
  expired: 'no attempt fits in the retry window any more',
  http_status: 'a 4xx answer other than 408, 410 and 429',
  gone: 'every URL answered 410 Gone',
  redirect: 'a 3xx answer (redirects are not followed)',
  tls: 'the certificate was refused (self-signed, expired, wrong host); nothing was sent',
  blocked_address: 'the URL resolves to a private or loopback address',
  invalid_url: 'the URL is malformed or not http/https',
  destination_disabled: 'the destination was disabled',
  destination_deleted: 'the destination was deleted',
  undeliverable: 'a request that cannot be built (an invalid header)',
  too_large: 'the outcome record would exceed the broker’s record size limit',
};

export function isDeadLetterReason(reason: string): reason is DeadLetterReason {
  return Object.hasOwn(DEAD_LETTER_REASONS, reason);
}

export interface DeadLetterFilter {
  destinationId?: string | undefined;
  /** Epoch ms: dead letters whose `deadAt` is at or after it. */
  since?: number | undefined;
  reason?: string | undefined;
}

/** A dead letter and its place on the dead-letter topic. */
export interface StoredDeadLetter {
  partition: number;
  offset: string;
  letter: DeadLetter;
}

export interface ListedDeadLetter extends StoredDeadLetter {
  /** When it was replayed; undefined if never. */
  replayedAt: number | undefined;
}

export interface DeadLetterList {
  /** Newest first (by `deadAt`, then partition and offset), at most `limit`. */
  deadLetters: ListedDeadLetter[];
  /** Dead letters matching the filter, including those beyond the limit. */
  matched: number;
}

export interface ReplayOutcome {
  /** Dead letters matching the filter. */
  matched: number;
  /** Written back to the deliveries topic by this call (or that would be, for a dry run). */
  replayed: number;
  /** Matching dead letters left alone because an earlier replay already sent them. */
  skipped: number;
  dryRun: boolean;
}

// ---------------------------------------------------------------------------------------
// Pure rules

export function matchesFilter(letter: DeadLetter, filter: DeadLetterFilter): boolean {
  if (filter.destinationId !== undefined && letter.delivery.destinationId !== filter.destinationId) return false;
  if (filter.reason !== undefined && letter.reason !== filter.reason) return false;
  if (filter.since !== undefined && letter.deadAt < filter.since) return false;
  return true;
}

export function replayMarkerKey(partition: number, offset: string): string {
  return `${partition}/${offset}`;
}

/** The delivery a replay sends: the same message with a fresh window, as if never attempted. */
export function replayedDelivery(delivery: Delivery): Delivery {
  return { ...delivery, attempts: 0, firstAttemptAt: null, lastError: null, lastStatus: null, replays: delivery.replays + 1 };
}

export interface PlannedReplay {
  stored: StoredDeadLetter;
  delivery: Delivery;
  markerKey: string;
  marker: DeadLetterReplay;
}

/** What to replay of the matching dead letters: those without a marker, in topic order. */
export function planReplay(
  matched: readonly StoredDeadLetter[],
  isReplayed: (markerKey: string) => boolean,
  now: number,
): { replay: PlannedReplay[]; skipped: number } {
  const replay: PlannedReplay[] = [];
  let skipped = 0;
  for (const stored of matched) {
    const markerKey = replayMarkerKey(stored.partition, stored.offset);
    if (isReplayed(markerKey)) {
      skipped++;
      continue;
    }
    const { deliveryId, destinationId } = stored.letter.delivery;
    replay.push({ stored, delivery: replayedDelivery(stored.letter.delivery), markerKey, marker: { deliveryId, destinationId, replayedAt: now } });
  }
  return { replay, skipped };
}

/** Newest first: later `deadAt`, then higher partition, then higher offset. */
export function newestFirst(a: StoredDeadLetter, b: StoredDeadLetter): number {
  if (a.letter.deadAt !== b.letter.deadAt) return b.letter.deadAt - a.letter.deadAt;
  if (a.partition !== b.partition) return b.partition - a.partition;
  const [x, y] = [BigInt(a.offset), BigInt(b.offset)];
  return x === y ? 0 : x < y ? 1 : -1;
}

/** Keeps the `limit` newest dead letters of what it is given, without holding the rest. */
export class NewestDeadLetters extends KeepNewest<StoredDeadLetter> {
  constructor(limit: number) {
    super(limit, newestFirst);
  }
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

export class TimeError extends Error {
  constructor(text: string) {
    super(`"${text}" is not a time: use ISO-8601 with a time zone (2024-05-01T12:00:00Z, or a date: 2024-05-01 = midnight UTC) or a duration meaning that long ago (30m, 2h, 7d)`);
    this.name = 'TimeError';
  }
}

/**
 * A point in time as operators write it: ISO-8601 with a time zone, a date (midnight UTC),
 * or a duration meaning that long before `now` (`2h` = two hours ago). A date-time without
 * a zone is refused rather than read in the local zone of whichever process parses it.
 */
export function parseTime(text: string, now: number): number {
  const input = text.trim();
  if (/^\d+(\.\d+)?(ms|s|m|h|d)/.test(input)) {
    try {
      return now - parseDuration(input);
    } catch {
      throw new TimeError(text);
    }
  }
  if (!ISO_8601.test(input)) throw new TimeError(text);
  const time = Date.parse(input);
  if (Number.isNaN(time)) throw new TimeError(text);
  return time;
}

// ---------------------------------------------------------------------------------------
// Kafka edge

/** A read of the dead-letter or marker topic did not reach the end offsets in time. */
export { TopicReadTimeout as DeadLetterReadTimeout } from './topic-scan.js';

/** Another replay registered the replay id while this one ran; nothing of this one was committed. */
export class ReplayInterrupted extends Error {
  constructor(override readonly cause: unknown) {
    super('another replay started while this one ran, so this one was rolled back; run it again (dead letters already replayed are skipped)');
    this.name = 'ReplayInterrupted';
  }
}

const FENCED = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']);

export interface DeadLetterStoreOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  logger: Logger;
  /** How long a read of the dead-letter or marker topic may take (default 60 s). */
  readTimeoutMs?: number;
}

export class DeadLetterStore {
  constructor(private readonly options: DeadLetterStoreOptions) {}

  async list(filter: DeadLetterFilter, limit: number): Promise<DeadLetterList> {
    const newest = new NewestDeadLetters(limit);
    await this.scan(filter, (stored) => newest.add(stored));
    const markers = await this.readMarkers();
    return {
      deadLetters: newest.newest().map((stored) => ({ ...stored, replayedAt: markers.get(replayMarkerKey(stored.partition, stored.offset))?.replayedAt })),
      matched: newest.matched,
    };
  }

  async replay(filter: DeadLetterFilter & { destinationId: string }, options: { dryRun?: boolean } = {}): Promise<ReplayOutcome> {
    const dryRun = options.dryRun ?? false;
    if (dryRun) {
      const markers = await this.readMarkers();
      const matched = await this.matching(filter);
      const plan = planReplay(matched, (key) => markers.has(key), Date.now());
      return { matched: matched.length, replayed: plan.replay.length, skipped: plan.skipped, dryRun };
    }
    const { kafka, codec, topics, logger } = this.options;
    const producer = createProducer(kafka, { transactionalId: `${topics.namespace}-dlq-replay` });
    await producer.connect();
    let transaction: Transaction | undefined;
    try {
      // Registers the id first (see the module comment): the markers read next are complete.
      transaction = await producer.transaction();
      const markers = await this.readMarkers();
      const matched = await this.matching(filter);
      const plan = planReplay(matched, (key) => markers.has(key), Date.now());
      const deliveries = plan.replay.map(({ delivery }) => ({ key: delivery.deliveryId, value: codec.encode(topics.dueRetries, delivery) }));
      const markerRecords = plan.replay.map(({ markerKey, marker }) => ({ key: markerKey, value: codec.encode(topics.deadLetterReplays, marker) }));
      await sendInChunks(transaction, [
        { topic: topics.dueRetries, messages: deliveries },
        { topic: topics.deadLetterReplays, messages: markerRecords },
      ]);
      await transaction.commit();
      logger.info(
        { destinationId: filter.destinationId, reason: filter.reason, since: filter.since, matched: matched.length, replayed: plan.replay.length, skipped: plan.skipped },
        'dead letters replayed',
      );
      return { matched: matched.length, replayed: plan.replay.length, skipped: plan.skipped, dryRun };
    } catch (error) {
      if (transaction?.isActive()) await transaction.abort().catch((abortError: unknown) => logger.warn({ err: abortError }, 'aborting the replay transaction failed'));
      throw wasFenced(error) ? new ReplayInterrupted(error) : error;
    } finally {
      await producer.disconnect().catch((error: unknown) => logger.warn({ err: error }, 'disconnecting the replay producer failed'));
    }
  }

  /** Matching dead letters in topic order (partition by partition, by offset). */
  private async matching(filter: DeadLetterFilter): Promise<StoredDeadLetter[]> {
    const matched: StoredDeadLetter[] = [];
    await this.scan(filter, (stored) => matched.push(stored));
    matched.sort((a, b) => a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
    return matched;
  }

  private async readMarkers(): Promise<Map<string, DeadLetterReplay>> {
    const { kafka, codec, topics, logger } = this.options;
    const reader = new CompactedTopicReader<DeadLetterReplay>({
      kafka,
      topic: topics.deadLetterReplays,
      logger,
      decode: (value) => codec.decode<DeadLetterReplay>('dlq-replay', value),
      groupPrefix: `${topics.namespace}-dlq-replay`,
    });
    try {
      await withTimeout(reader.start(), this.readTimeoutMs, `reading ${topics.deadLetterReplays}`);
      return new Map(reader.entries());
    } finally {
      await reader.stop();
    }
  }

  private get readTimeoutMs(): number {
    return this.options.readTimeoutMs ?? 60_000;
  }

  /**
   * Calls `onMatch` for every dead letter matching the filter, from `since` (found by
   * record timestamp: a dead letter is produced after its `deadAt`, so nothing at or after
   * `since` comes earlier) up to the end offsets of the moment the scan starts.
   */
  private async scan(filter: DeadLetterFilter, onMatch: (stored: StoredDeadLetter) => void): Promise<void> {
    const { kafka, codec, topics, logger } = this.options;
    await scanTopic<DeadLetter>(
      {
        kafka,
        topic: topics.deadLetters,
        groupId: `${topics.namespace}-dlq-reader-${randomUUID()}`,
        since: filter.since,
        timeoutMs: this.readTimeoutMs,
        logger,
        decode: (value) => codec.decode<DeadLetter>('dlq', value),
      },
      ({ partition, offset, value: letter }) => {
        if (matchesFilter(letter, filter)) onMatch({ partition, offset, letter });
      },
    );
  }
}

/** kafkajs may wrap the broker's answer (retries exhausted, a non-retriable wrapper). */
function wasFenced(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { type, cause, originalError } = current as { type?: unknown; cause?: unknown; originalError?: unknown };
    if (typeof type === 'string' && FENCED.has(type)) return true;
    current = cause ?? originalError;
  }
  return false;
}
