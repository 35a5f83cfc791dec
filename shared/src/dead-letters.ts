/**
 * Dead letters for operators: listing them and replaying them to the retry lane
 * (`<namespace>.deliveries.retries.v1`) with a fresh retry window — the retry lane, so that a
 * replay of thousands never queues in front of first attempts. The admin API (ingest) calls this; the CLI wraps the admin API.
 *
 * A dead letter is identified by its place on the dead-letter topic, `<partition>/<offset>`.
 * Replaying one writes its delivery back to the retry lane and a marker under that key
 * to `<namespace>.dlq-replays.v1` (naming the delivery and destination, so that a marker left
 * by an earlier incarnation of a recreated dead-letter topic does not count), in one
 * transaction: running the same replay again finds the markers and skips what was already
 * replayed, and a crash leaves either both or neither. A delivery that dies again after its
 * replay is a new dead letter, replayable in its turn.
 *
 * A replay is written in slices as it reads (REPLAY_SLICE_LIMITS), each slice one
 * transaction with its deliveries and their markers. One transaction for everything does
 * not work at size: on a slow host a replay of tens of thousands of dead letters outlasts the
 * producer's transaction timeout, so the broker aborts it and the replay fails however often
 * it is run; it also holds every read_committed reader of the retry lane back for as long,
 * and the whole backlog in memory (100,000 dead letters with 700-byte bodies: 180 MB of heap).
 * A replay stopped part-way has committed whole slices, which a re-run skips.
 *
 * Every replay, from any ingest replica, uses the one transactional id
 * `<namespace>-dlq-replay` and registers it before reading the markers. Registering fences
 * a replay still running elsewhere (its next slice fails) and finishes any transaction of
 * the previous holder, so the markers read afterwards include every slice that committed:
 * two replays at once cannot both send the same dead letter.
 *
 * Reads stop at the end offsets the topics had when the call began (read_committed), so a
 * call never waits for records written after it started.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import type { DeadLetter, DeadLetterReason, DeadLetterReplay, Delivery, TopicNames } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import { parseDuration } from './duration.js';
import { createProducer, TRANSACTION_TIMEOUT_MS } from './kafka.js';
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

/**
 * Where a dead letter stands in newest-first order (`deadAt`, then partition, then offset):
 * what a listing's cursor names. The place on the topic alone would not do, as the order is
 * by `deadAt` first, and many dead letters may share one millisecond.
 */
export interface DeadLetterPosition {
  deadAt: number;
  partition: number;
  offset: string;
}

export interface DeadLetterList {
  /** Newest first (by `deadAt`, then partition and offset), at most `limit`. */
  deadLetters: ListedDeadLetter[];
  /** Dead letters matching the filter, including those beyond the limit and before the cursor. */
  matched: number;
  /** Where the next (older) page starts: the last dead letter listed; undefined when none is older. */
  next: DeadLetterPosition | undefined;
}

export interface ReplayOutcome {
  /** Dead letters matching the filter. */
  matched: number;
  /** Written back to the retry lane by this call (or that would be, for a dry run). */
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

/**
 * Whether `marker`, found at a dead letter's key, records the replay of that very dead letter.
 * The key alone is a position: when the dead-letter topic is deleted and recreated (to purge
 * it), its offsets start again, and new dead letters land where replayed ones were.
 */
export function isMarkerOf(marker: DeadLetterReplay | undefined, letter: DeadLetter): marker is DeadLetterReplay {
  return marker !== undefined && marker.deliveryId === letter.delivery.deliveryId && marker.destinationId === letter.delivery.destinationId;
}

/** The marker recording that this dead letter was replayed; undefined if it never was. */
export function replayMarkerOf(stored: StoredDeadLetter, markers: ReadonlyMap<string, DeadLetterReplay>): DeadLetterReplay | undefined {
  const marker = markers.get(replayMarkerKey(stored.partition, stored.offset));
  return isMarkerOf(marker, stored.letter) ? marker : undefined;
}

/** The delivery a replay sends: the same message with a fresh window, as if never attempted. */
export function replayedDelivery(delivery: Delivery): Delivery {
  return { ...delivery, attempts: 0, firstAttemptAt: null, lastError: null, lastStatus: null, replays: delivery.replays + 1 };
}

export interface PlannedReplay {
  delivery: Delivery;
  markerKey: string;
  marker: DeadLetterReplay;
}

/** What replaying a matching dead letter writes; undefined when an earlier replay sent it. */
export function planReplay(stored: StoredDeadLetter, markers: ReadonlyMap<string, DeadLetterReplay>, now: number): PlannedReplay | undefined {
  if (replayMarkerOf(stored, markers)) return undefined;
  const { deliveryId, destinationId } = stored.letter.delivery;
  return {
    delivery: replayedDelivery(stored.letter.delivery),
    markerKey: replayMarkerKey(stored.partition, stored.offset),
    marker: { deliveryId, destinationId, replayedAt: now },
  };
}

/** The most one replay transaction holds. */
export interface SliceLimits {
  /** Dead letters. */
  records: number;
  /** Bytes of the encoded keys and values, deliveries and markers together. */
  bytes: number;
}

/**
 * 2,000 dead letters or 4 MiB, whichever comes first. The bytes bound how long a slice's
 * transaction stays open — 4 MiB is five or six produce requests (MAX_PRODUCE_REQUEST_BYTES);
 * on the 2-core test machine a slice of 2,000 (1.7 MB) took about 0.1 s, against the broker's
 * 15 s transaction timeout — and so how long the read_committed readers of the retry lane (the
 * retry scheduler, for every destination) wait behind it, and what a replay holds in memory.
 * The count bounds the work of small dead letters the same way (markers, commit), and is what
 * an audience sync puts in a transaction.
 */
export const REPLAY_SLICE_LIMITS: Readonly<SliceLimits> = { records: 2_000, bytes: 4 * 1024 * 1024 };

/**
 * Cuts a stream of items into consecutive slices within `limits`, handing each out as soon as
 * it is complete, so that the writer of the slices holds one at a time. An item larger than
 * `limits.bytes` is a slice of its own.
 */
export class Slicer<T> {
  private items: T[] = [];
  private bytes = 0;

  constructor(private readonly limits: Readonly<SliceLimits>) {
    if (!(limits.records >= 1 && limits.bytes >= 1)) throw new RangeError(`a slice must hold at least one record and one byte (got ${limits.records} records, ${limits.bytes} bytes)`);
  }

  /** Adds an item of `bytes` bytes; returns the slice that this completes, if any. */
  add(item: T, bytes: number): T[] | undefined {
    const completed = this.items.length > 0 && this.bytes + bytes > this.limits.bytes ? this.take() : undefined;
    this.items.push(item);
    this.bytes += bytes;
    // After a take the item is held alone, which fills a slice only at a limit of one record,
    // and at that limit nothing is ever held before an item: never two slices at once.
    return completed ?? (this.items.length >= this.limits.records ? this.take() : undefined);
  }

  /** The last slice, holding what is left; undefined if nothing is. */
  finish(): T[] | undefined {
    return this.items.length > 0 ? this.take() : undefined;
  }

  private take(): T[] {
    const slice = this.items;
    this.items = [];
    this.bytes = 0;
    return slice;
  }
}

/**
 * Whether a slice that failed as fenced can only have been fenced by another replay registering
 * the replay id. The broker also aborts a transaction left open past the producer's transaction
 * timeout, bumping the epoch, and that fails the same way. `openMs` is timed from before the
 * transaction began, so it is at least the broker's own count: below the timeout, the broker
 * cannot have aborted it.
 */
export function fencedByAnotherReplay(openMs: number, transactionTimeoutMs: number = TRANSACTION_TIMEOUT_MS): boolean {
  return openMs < transactionTimeoutMs;
}

export function positionOf({ partition, offset, letter }: StoredDeadLetter): DeadLetterPosition {
  return { deadAt: letter.deadAt, partition, offset };
}

/** Positions newest first: later `deadAt`, then higher partition, then higher offset. */
export function newerFirst(a: DeadLetterPosition, b: DeadLetterPosition): number {
  if (a.deadAt !== b.deadAt) return b.deadAt - a.deadAt;
  if (a.partition !== b.partition) return b.partition - a.partition;
  return compareOffsets(b.offset, a.offset);
}

/**
 * Offsets as numbers, from their canonical decimal text (as Kafka gives them and a cursor holds
 * them: no sign, no leading zeros), where the longer is the larger. Without parsing them into
 * bigints: a listing compares a dead letter with up to `limit` kept ones.
 */
function compareOffsets(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Dead letters newest first, by their positions (newerFirst). */
export function newestFirst(a: StoredDeadLetter, b: StoredDeadLetter): number {
  return newerFirst(positionOf(a), positionOf(b));
}

/** Keeps the `limit` newest dead letters of what it is given, without holding the rest. */
export class NewestDeadLetters extends KeepNewest<StoredDeadLetter> {
  constructor(limit: number) {
    super(limit, newestFirst);
  }
}

/** Whether `stored` comes strictly after `position` in newest-first order (is older). */
export function isOlderThan(stored: StoredDeadLetter, position: DeadLetterPosition): boolean {
  return newerFirst(positionOf(stored), position) > 0;
}

/** One page of a listing, gathered from the matching dead letters in whatever order the scan reads them. */
export interface GatheredPage {
  /** Newest first, at most `limit`, all older than the cursor. */
  deadLetters: StoredDeadLetter[];
  /** Every dead letter given, the cursor notwithstanding. */
  matched: number;
  /** The last of `deadLetters`, when more lie beyond it; undefined when none do. */
  next: DeadLetterPosition | undefined;
}

/**
 * Gathers one page: of the dead letters it is given, the `limit` newest of those strictly older
 * than `before` (all of them without it), counting every one. More lie beyond the page exactly
 * when more than `limit` are older than `before`: the next page starts after the last listed,
 * and as positions are unique (one place on the topic each), no dead letter is listed on two
 * pages or skipped, however many share a `deadAt`.
 */
export class DeadLetterPage {
  private readonly newest: NewestDeadLetters;
  private given = 0;

  constructor(
    private readonly limit: number,
    private readonly before?: DeadLetterPosition,
  ) {
    this.newest = new NewestDeadLetters(limit);
  }

  add(stored: StoredDeadLetter): void {
    this.given++;
    if (this.before === undefined || isOlderThan(stored, this.before)) this.newest.add(stored);
  }

  page(): GatheredPage {
    const deadLetters = this.newest.newest();
    const last = deadLetters.at(-1);
    // NewestDeadLetters counts all it was given: here, every match older than the cursor.
    const more = this.newest.matched > this.limit;
    return { deadLetters, matched: this.given, next: more && last ? positionOf(last) : undefined };
  }
}

// A cursor is `<deadAt>-<partition>-<offset>`, each in canonical decimal (no sign but deadAt's
// minus, no leading zeros), so that each position has exactly one cursor and a cursor that
// was not formatted here is refused rather than read some way.
const CURSOR = /^(0|-?[1-9]\d{0,15})-(0|[1-9]\d{0,9})-(0|[1-9]\d{0,18})$/;
const MAX_PARTITION = 2 ** 31 - 1;
const MAX_OFFSET = 2n ** 63n - 1n;

export function formatDeadLetterCursor({ deadAt, partition, offset }: DeadLetterPosition): string {
  return `${deadAt}-${partition}-${offset}`;
}

/** The position a cursor names; undefined for anything `formatDeadLetterCursor` does not write. */
export function parseDeadLetterCursor(text: string): DeadLetterPosition | undefined {
  const match = CURSOR.exec(text);
  if (!match) return undefined;
  // All three groups are required: a match sets each.
  const position: DeadLetterPosition = { deadAt: Number(match[1]!), partition: Number(match[2]!), offset: match[3]! };
  if (!Number.isSafeInteger(position.deadAt) || position.partition > MAX_PARTITION || BigInt(position.offset) > MAX_OFFSET) return undefined;
  return position;
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

/**
 * A replay stopped part-way because its producer was fenced. The slices committed before went
 * out — `replayed` dead letters, which a re-run skips — and the slice in flight was rolled back.
 * `byAnotherReplay`: certainly fenced by another replay registering the replay id; otherwise the
 * broker may instead have aborted a transaction of this one for outliving the timeout.
 */
export class ReplayInterrupted extends Error {
  constructor(
    readonly replayed: number,
    readonly byAnotherReplay: boolean,
    override readonly cause: unknown,
  ) {
    super(interruptionMessage(replayed, byAnotherReplay));
    this.name = 'ReplayInterrupted';
  }
}

function interruptionMessage(replayed: number, byAnotherReplay: boolean): string {
  const done = `after replaying ${replayed} dead letter${replayed === 1 ? '' : 's'}`;
  const rerun = 'running it again skips every dead letter already replayed';
  if (byAnotherReplay) return `another replay started and stopped this one ${done}; ${rerun}`;
  return (
    `this replay stopped ${done}: one of its transactions stayed open longer than the broker's transaction timeout ` +
    `(${TRANSACTION_TIMEOUT_MS / 1000} s) and was aborted, or another replay started at that moment; ${rerun}`
  );
}

const FENCED = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']);

/**
 * How long a replay's pass over the dead-letter topic, writing as it goes, may take in all: far
 * beyond what a large backlog needs (100,000 dead letters took 7 s on the test machine), only
 * there to end a replay whose reads stall for good rather than hold the replay id forever.
 */
export const REPLAY_TIMEOUT_MS = 30 * 60_000;

export interface DeadLetterStoreOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  logger: Logger;
  /** How long a read of the dead-letter or marker topic may take for a listing, and of the markers for a replay (default 60 s). */
  readTimeoutMs?: number;
  /** How long a replay's pass over the dead-letter topic may take (default REPLAY_TIMEOUT_MS): it grows with the backlog. */
  replayTimeoutMs?: number;
  /** What one replay transaction holds at most (default REPLAY_SLICE_LIMITS). */
  replaySlice?: Readonly<SliceLimits>;
}

export interface ReplayOptions {
  /** Count what would be replayed, writing nothing. */
  dryRun?: boolean;
  /** Called whenever the replay moves on (a dead letter read, a slice committed): for a caller that waits as long as it does. */
  onProgress?: () => void | Promise<void>;
}

/** One dead letter's replay, encoded: its delivery for the retry lane and its marker. */
interface ReplayRecords {
  delivery: Message;
  marker: Message;
}

const bytesOf = ({ key, value }: Message): number => (key == null ? 0 : Buffer.byteLength(key)) + (value == null ? 0 : Buffer.byteLength(value));

interface Tally {
  matched: number;
  replayed: number;
  skipped: number;
}

export class DeadLetterStore {
  constructor(private readonly options: DeadLetterStoreOptions) {}

  /**
   * The `limit` newest dead letters matching the filter and older than `before` (a page's
   * cursor), with the count of all matches and where the next page starts. Every page reads
   * the whole range from `since`: the order is by `deadAt`, which the place on the topic
   * does not follow, so no part of the range can be left out.
   */
  async list(filter: DeadLetterFilter, limit: number, before?: DeadLetterPosition): Promise<DeadLetterList> {
    const gathered = new DeadLetterPage(limit, before);
    await this.scan(filter, this.readTimeoutMs, (stored) => gathered.add(stored));
    const { deadLetters, matched, next } = gathered.page();
    const markers = await this.readMarkers();
    return { deadLetters: deadLetters.map((stored) => ({ ...stored, replayedAt: replayMarkerOf(stored, markers)?.replayedAt })), matched, next };
  }

  async replay(filter: DeadLetterFilter & { destinationId: string }, options: ReplayOptions = {}): Promise<ReplayOutcome> {
    // Awaited where it is called: a caller may hold the replay back there (the tests, to
    // register a competing replay at a known point).
    const onProgress = options.onProgress ?? (() => undefined);
    if (options.dryRun ?? false) return this.countReplay(filter, onProgress);
    const { kafka, codec, topics, logger } = this.options;
    const producer = createProducer(kafka, { transactionalId: `${topics.namespace}-dlq-replay` });
    const tally: Tally = { matched: 0, replayed: 0, skipped: 0 };
    let slices = 0;
    const write = async (slice: ReplayRecords[]) => {
      await this.writeSlice(producer, slice, tally.replayed);
      tally.replayed += slice.length;
      slices++;
      await onProgress();
    };
    await producer.connect();
    try {
      // Registers the id first (see the module comment): the markers read next are complete.
      await (await producer.transaction()).abort();
      const markers = await this.readMarkers();
      await onProgress();
      const slicer = new Slicer<ReplayRecords>(this.options.replaySlice ?? REPLAY_SLICE_LIMITS);
      await this.scan(
        filter,
        this.replayTimeoutMs,
        async (stored) => {
          tally.matched++;
          const planned = planReplay(stored, markers, Date.now());
          if (!planned) {
            tally.skipped++;
            return;
          }
          const records: ReplayRecords = {
            delivery: { key: planned.delivery.deliveryId, value: codec.encode(topics.dueRetries, planned.delivery) },
            marker: { key: planned.markerKey, value: codec.encode(topics.deadLetterReplays, planned.marker) },
          };
          const slice = slicer.add(records, bytesOf(records.delivery) + bytesOf(records.marker));
          if (slice) await write(slice);
        },
        onProgress,
      );
      const last = slicer.finish();
      if (last) await write(last);
      logger.info({ ...filterFields(filter), ...tally, slices }, 'dead letters replayed');
      return { ...tally, dryRun: false };
    } catch (error) {
      logger.warn({ ...filterFields(filter), ...tally, slices, err: error }, 'dead-letter replay stopped part-way');
      throw error;
    } finally {
      await producer.disconnect().catch((error: unknown) => logger.warn({ err: error }, 'disconnecting the replay producer failed'));
    }
  }

  /** A dry run: what a replay would do now, writing nothing. */
  private async countReplay(filter: DeadLetterFilter, onProgress: () => void | Promise<void>): Promise<ReplayOutcome> {
    const markers = await this.readMarkers();
    await onProgress();
    const tally: Tally = { matched: 0, replayed: 0, skipped: 0 };
    await this.scan(
      filter,
      this.replayTimeoutMs,
      (stored) => {
        tally.matched++;
        if (replayMarkerOf(stored, markers)) tally.skipped++;
        else tally.replayed++;
      },
      onProgress,
    );
    return { ...tally, dryRun: true };
  }

  /** One slice in one transaction: its deliveries and their markers, or neither. */
  private async writeSlice(producer: Producer, slice: ReplayRecords[], replayedBefore: number): Promise<void> {
    const { topics, logger } = this.options;
    const began = Date.now();
    let transaction: Transaction | undefined;
    try {
      transaction = await producer.transaction();
      await sendInChunks(transaction, [
        { topic: topics.dueRetries, messages: slice.map(({ delivery }) => delivery) },
        { topic: topics.deadLetterReplays, messages: slice.map(({ marker }) => marker) },
      ]);
      await transaction.commit();
    } catch (error) {
      // A fenced producer's transaction is already finished by the broker; an abort would fail too.
      if (wasFenced(error)) throw new ReplayInterrupted(replayedBefore, fencedByAnotherReplay(Date.now() - began), error);
      if (transaction?.isActive()) await transaction.abort().catch((abortError: unknown) => logger.warn({ err: abortError }, 'aborting a replay transaction failed'));
      throw error;
    }
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

  private get replayTimeoutMs(): number {
    return this.options.replayTimeoutMs ?? REPLAY_TIMEOUT_MS;
  }

  /**
   * Calls `onMatch` for every dead letter matching the filter, from `since` (found by
   * record timestamp: a dead letter is produced after its `deadAt`, so nothing at or after
   * `since` comes earlier) up to the end offsets of the moment the scan starts, partition by
   * partition in offset order; `onRead` for every dead letter read. A promise `onMatch` returns
   * holds the read back until it settles.
   */
  private async scan(
    filter: DeadLetterFilter,
    timeoutMs: number,
    onMatch: (stored: StoredDeadLetter) => Promise<void> | void,
    onRead: () => void | Promise<void> = () => undefined,
  ): Promise<void> {
    const { kafka, codec, topics, logger } = this.options;
    // A consumer that loses its group session (a long slice write) rejoins from the start of
    // the range, as nothing is committed: what it is handed again is passed over, so that no
    // dead letter is counted, or replayed, twice.
    const read = new Map<number, bigint>();
    await scanTopic<DeadLetter>(
      {
        kafka,
        topic: topics.deadLetters,
        groupId: `${topics.namespace}-dlq-reader-${randomUUID()}`,
        since: filter.since,
        timeoutMs,
        logger,
        decode: (value) => codec.decode<DeadLetter>('dlq', value),
      },
      async ({ partition, offset, value: letter }) => {
        await onRead();
        const position = BigInt(offset);
        if (position <= (read.get(partition) ?? -1n)) return;
        read.set(partition, position);
        if (matchesFilter(letter, filter)) await onMatch({ partition, offset, letter });
      },
    );
  }
}

function filterFields(filter: DeadLetterFilter): Record<string, unknown> {
  return { destinationId: filter.destinationId, reason: filter.reason, since: filter.since };
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
