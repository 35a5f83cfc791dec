/**
 * Fixes to kafkajs 2.2.4 (unmaintained since 2023: the fixes below sit in open pull requests)
 * applied where the services create their Kafka client, so that one module decides how Kafka
 * is spoken to.
 *
 * RequestQueue.scheduleCheckPendingRequests (kafkajs issues #1556, #1604, #1704): after any
 * request is answered it re-arms a timer even when no request is pending and nothing is
 * throttled, with a negative delay — so every broker connection of every producer, consumer
 * and admin client runs a 1 ms setTimeout loop for the rest of its life. Measured here: about
 * 2 % of a core per idle service (ingest, router, dispatcher, retry-scheduler, indexer alike),
 * and a thousand needless wake-ups a second per connection under load. The replacement keeps
 * the checks that matter — a pending request, or a throttle to wait out — and arms nothing
 * otherwise; `push` arms it again when a request has to wait.
 *
 * Encoder (every record, request and batch kafkajs writes): its constructor takes a
 * zero-filled `Buffer.alloc(512)` and every growth another zero-filled buffer. Zero-filling
 * is wasted — the encoder copies out only the bytes it wrote (`buffer` is `buf.slice(0,
 * offset)`, and nothing else reads `buf`) — and it is the expensive part: measured on Node 20,
 * `Buffer.alloc(512)` 1.6 µs against 0.15 µs for the pooled `Buffer.allocUnsafe(512)`, and a
 * produced record of the webhook's size takes two of them. The constructor sizes its buffer
 * through the static `Encoder.nextPowerOfTwo`, used nowhere else: the fix makes that answer
 * 0 (an empty buffer, no fill) and lets the first write allocate, unfilled, in
 * `ensureAvailable`. Its varints (several per record) went through a temporary array and a
 * `Buffer.from` each, and its varlongs through kafkajs's 64-bit `Long` arithmetic even for the
 * small timestamp deltas every record carries; both now write into the buffer directly (the
 * same bytes: ZigZag of a value below 2^30 is the same in 32 and 64 bits). And each layer of a
 * request no longer copies the layer below: long buffers are held by reference and joined once
 * (`fixEncoderCopies`, below).
 *
 * CRC-32C of every record batch: kafkajs's byte-at-a-time loop is replaced by `crc32c.ts`
 * (same value; native where `@node-rs/crc32` loads, about twenty times faster, else about three). The record-batch module captures the function when it
 * is first required, which kafkajs does lazily on the first produce; the fix puts the faster
 * function in the module cache before that. `applyKafkajsFixes` is called where the services
 * create their Kafka client, before anything is produced.
 *
 * Coordinator lookups (`coordinator-cache.ts`): kafkajs asks the cluster for the transaction
 * coordinator before every transactional request and for the group coordinator before every
 * transactional offset commit — a FindCoordinator round trip in front of each, in series.
 * `Cluster.findGroupCoordinator` now answers from a cache, filled by kafkajs's own lookup; a
 * request to a coordinator (those in `COORDINATOR_REQUESTS`) that fails because the broker is
 * not the coordinator, or that gets no answer, empties it, so a coordinator that moved or went
 * away is looked up again on the retry, as kafkajs did.
 *
 * AddOffsetsToTxn and AddPartitionsToTxn are retried on CONCURRENT_TRANSACTIONS within the
 * request, with a short backoff (`retryingConcurrentTransactions`).
 *
 * A consumer's seek lookups (`isStale()`) answer at once while no seek is pending
 * (`fixSeekLookups`).
 *
 * ListOffsets (`Cluster.fetchTopicsOffset`, under the admin's `fetchTopicOffsets`) rides out a
 * partition whose leader is not elected yet (`retryingLeaderElections`).
 *
 * Not a fix: every request sent is counted at kafkajs's Connection (`kafka-requests.ts`), for
 * `tributary_kafka_requests_total`.
 *
 * One more fix lives in `kafkajs-grouping.ts` (a send's messages grouped by partition in one
 * pass instead of a copy per message): it must be made before kafkajs loads, not after.
 */
import { createRequire } from 'node:module';
import { coordinatorMayHaveMoved, CoordinatorCache, protocolErrorType } from './coordinator-cache.js';
import { crc32c } from './crc32c.js';
import { noteKafkaRequest } from './kafka-requests.js';

/** kafkajs's own interval for re-checking a queue with requests waiting. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

interface EncoderInternals {
  buf: Buffer;
  offset: number;
  /** Bytes before `buf`'s, held by reference (`fixEncoderCopies`); undefined while there are none. */
  parts?: Buffer[];
  partsBytes?: number;
  ensureAvailable(length: number): void;
  writeBufferInternal(buffer: Buffer): void;
  writeBytes(value: unknown): EncoderInternals;
  writeInt32(value: number): EncoderInternals;
  writeEncoder(value: EncoderInternals): EncoderInternals;
  writeEncoderArray(values: EncoderInternals[]): EncoderInternals;
  writeArray(array: unknown[], type?: string, length?: number): EncoderInternals;
  size(): number;
  writeUVarInt(value: number): EncoderInternals;
  writeVarLong(value: unknown): EncoderInternals;
}
interface EncoderClass {
  nextPowerOfTwo(value: number): number;
  encodeZigZag(value: number): number;
  prototype: EncoderInternals;
}

/** Values whose 64-bit ZigZag form equals the 32-bit one, so a varlong can be written as a varint. */
const SMALL_VARLONG = 2 ** 30;

/** What kafkajs's constructor asks for; the first write allocates at least this much. */
const ENCODER_INITIAL_BYTES = 512;

const require = createRequire(import.meta.url);
let applied = false;

/** The version the fix was written against; another version is left as it is. */
export const FIXED_KAFKAJS_VERSION = '2.2.4';

export function applyKafkajsFixes(): boolean {
  if (applied) return true;
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
    if (this.throttleCheckTimeoutId) return;
    const throttledFor = this.throttledUntil - Date.now();
    let delay: number;
    if (this.pending.length > 0) delay = throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS;
    else if (throttledFor > 0) delay = throttledFor;
    else return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delay);
  };
  const Encoder = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
  fixEncoderAllocation(Encoder);
  fixEncoderCopies(Encoder);
  fixVarints(Encoder);
  fixRecordBatchCrc();
  fixCoordinatorLookups(
    require('kafkajs/src/cluster/index.js') as { prototype: ClusterInternals },
    require('kafkajs/src/broker/index.js') as { prototype: Record<string, unknown> },
  );
  fixSeekLookups(require('kafkajs/src/consumer/seekOffsets.js') as { prototype: SeekOffsetsInternals });
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: OffsetsCluster };
  Cluster.prototype.fetchTopicsOffset = retryingLeaderElections(Cluster.prototype.fetchTopicsOffset);
  countRequests(require('kafkajs/src/network/connection.js') as { prototype: ConnectionInternals });
  applied = true;
  return true;
}

function fixEncoderAllocation(Encoder: EncoderClass): void {
  const nextPowerOfTwo = Encoder.nextPowerOfTwo.bind(Encoder);
  Encoder.prototype.ensureAvailable = function ensureAvailable(this: EncoderInternals, length: number): void {
    const needed = this.offset + length;
    if (needed <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(ENCODER_INITIAL_BYTES, nextPowerOfTwo(needed)));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
  // Only the constructor calls it (`Buffer.alloc(Encoder.nextPowerOfTwo(initialSize))`).
  Encoder.nextPowerOfTwo = () => 0;
}

/** A buffer at least this long is held by reference when written into an encoder, not copied. */
export const ENCODER_REFERENCE_BYTES = 4096;

function isEncoder(value: unknown): value is EncoderInternals {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as EncoderInternals).buf);
}

/**
 * kafkajs builds a request bottom-up, each layer in its own encoder that copies the layer
 * below: a produce request's records are copied into the batch body, the body into the
 * batch, the batch into its partition, the partition into the topic, the topic into the
 * request, the request into its size-framed envelope — each copy into a buffer grown by
 * doubling. For 100 KB of records that is ~1.4 MB of buffers, all past Node's 4 KB pool and
 * so counted by V8 as external memory, which it adds to the old generation when deciding to
 * start a full collection: measured at 1,000 events/s, the router ran a mark-compact every
 * 0.3–0.5 s and ingest every 0.8 s (the dispatcher, which produces far less, a ninth as often
 * as the router), with a tenth of a core in the router's concurrent-marking threads.
 *
 * Here an encoder keeps a long buffer written into it (ENCODER_REFERENCE_BYTES and up), or
 * another encoder's long contents, by reference — `parts` before its own `buf` — and joins
 * them once, when its `buffer` is read (kafkajs reads it for the batch's CRC, to frame the
 * batch, and to write the request to the socket). Arrays of encoders are sized before they
 * are copied, so that copying them grows the buffer once. What is held by reference is never
 * written again: encoders only append, and an encoder that seals its bytes as a part goes on
 * writing past them.
 */
function fixEncoderCopies(Encoder: EncoderClass): void {
  const proto = Encoder.prototype;
  const copyIn = proto.writeBufferInternal;
  const writeArray = proto.writeArray;
  const hold = (encoder: EncoderInternals, part: Buffer): void => {
    if (encoder.parts === undefined) {
      encoder.parts = [];
      encoder.partsBytes = 0;
    }
    if (encoder.offset > 0) {
      encoder.parts.push(encoder.buf.subarray(0, encoder.offset));
      encoder.partsBytes! += encoder.offset;
      encoder.buf = encoder.buf.subarray(encoder.offset);
      encoder.offset = 0;
    }
    encoder.parts.push(part);
    encoder.partsBytes! += part.length;
  };
  /** Bytes that writing these values would copy rather than hold. */
  const copiedBytes = (values: readonly unknown[]): number => {
    let bytes = 0;
    for (const value of values) if (isEncoder(value) && value.offset < ENCODER_REFERENCE_BYTES) bytes += value.offset;
    return bytes;
  };
  proto.writeBufferInternal = function writeBufferInternal(this: EncoderInternals, buffer: Buffer): void {
    if (buffer.length < ENCODER_REFERENCE_BYTES) copyIn.call(this, buffer);
    else hold(this, buffer);
  };
  const writeBytes = proto.writeBytes;
  proto.writeBytes = function heldWriteBytes(this: EncoderInternals, value: unknown): EncoderInternals {
    // kafkajs sizes the buffer for the length prefix and the bytes together; held, they need only the prefix.
    if (!Buffer.isBuffer(value) || value.length < ENCODER_REFERENCE_BYTES) return writeBytes.call(this, value);
    this.writeInt32(value.length);
    hold(this, value);
    return this;
  };
  proto.writeEncoder = function writeEncoder(this: EncoderInternals, value: EncoderInternals): EncoderInternals {
    if (!isEncoder(value)) throw new Error('value should be an instance of Encoder');
    if (value.parts !== undefined) for (const part of value.parts) hold(this, part);
    this.writeBufferInternal(value.buf.subarray(0, value.offset));
    return this;
  };
  proto.writeEncoderArray = function writeEncoderArray(this: EncoderInternals, values: EncoderInternals[]): EncoderInternals {
    if (!Array.isArray(values) || !values.every(isEncoder)) throw new Error('all values should be an instance of Encoder[]');
    this.ensureAvailable(copiedBytes(values));
    for (const value of values) this.writeEncoder(value);
    return this;
  };
  proto.writeArray = function presizedWriteArray(this: EncoderInternals, array: unknown[], type?: string, length?: number): EncoderInternals {
    if (Array.isArray(array)) this.ensureAvailable(4 + copiedBytes(array));
    return writeArray.call(this, array, type, length);
  };
  proto.size = function size(this: EncoderInternals): number {
    return (this.partsBytes ?? 0) + this.offset;
  };
  Object.defineProperty(proto, 'buffer', {
    configurable: true,
    get(this: EncoderInternals): Buffer {
      if (this.parts !== undefined) {
        this.parts.push(this.buf.subarray(0, this.offset));
        const whole = Buffer.concat(this.parts, this.partsBytes! + this.offset);
        this.parts = undefined;
        this.partsBytes = 0;
        this.buf = whole;
        this.offset = whole.length;
      }
      return this.buf.subarray(0, this.offset);
    },
  });
}

function fixVarints(Encoder: EncoderClass): void {
  const writeVarLong = Encoder.prototype.writeVarLong;
  Encoder.prototype.writeUVarInt = function writeUVarInt(this: EncoderInternals, value: number): EncoderInternals {
    this.ensureAvailable(5);
    let rest = value >>> 0;
    while (rest > 0x7f) {
      this.buf[this.offset++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.buf[this.offset++] = rest;
    return this;
  };
  Encoder.prototype.writeVarLong = function fastWriteVarLong(this: EncoderInternals, value: unknown): EncoderInternals {
    if (typeof value === 'number' && Number.isInteger(value) && value >= -SMALL_VARLONG && value < SMALL_VARLONG) {
      return this.writeUVarInt(Encoder.encodeZigZag(value));
    }
    return writeVarLong.call(this, value);
  };
}

/** Paths of kafkajs's CRC-32C module and of the record-batch module that captures it. */
const CRC_MODULE = 'kafkajs/src/protocol/recordBatch/crc32C/index.js';
const RECORD_BATCH_MODULE = 'kafkajs/src/protocol/recordBatch/v0/index.js';

/** False when the record-batch module was loaded before the fix: it keeps the slow function. */
let crcFixed = false;
export const recordBatchCrcFixed = (): boolean => crcFixed;

function fixRecordBatchCrc(): void {
  const crcPath = require.resolve(CRC_MODULE);
  if (require.cache[require.resolve(RECORD_BATCH_MODULE)]) return;
  require(CRC_MODULE);
  const cached = require.cache[crcPath];
  if (!cached) return;
  cached.exports = crc32c;
  crcFixed = true;
}

interface CoordinatorBroker {
  nodeId: number | null;
}
interface ClusterInternals {
  findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<CoordinatorBroker>;
  findBroker(args: { nodeId: number }): Promise<CoordinatorBroker>;
}

/** Longest a coordinator found is trusted while no request to a coordinator fails. */
const COORDINATOR_TTL_MS = 30_000;

/** The Broker requests kafkajs sends to a group or transaction coordinator it looked up. */
export const COORDINATOR_REQUESTS = [
  'heartbeat',
  'joinGroup',
  'leaveGroup',
  'syncGroup',
  'offsetCommit',
  'offsetFetch',
  'describeGroups',
  'initProducerId',
  'addPartitionsToTxn',
  'addOffsetsToTxn',
  'txnOffsetCommit',
  'endTxn',
] as const;

function fixCoordinatorLookups(Cluster: { prototype: ClusterInternals }, Broker: { prototype: Record<string, unknown> }): void {
  const caches = new WeakMap<ClusterInternals, CoordinatorCache>();
  const lookUp = Cluster.prototype.findGroupCoordinator;
  Cluster.prototype.findGroupCoordinator = async function findGroupCoordinator(this: ClusterInternals, args) {
    const { groupId, coordinatorType = 0 } = args;
    let cache = caches.get(this);
    if (!cache) caches.set(this, (cache = new CoordinatorCache({ ttlMs: COORDINATOR_TTL_MS })));
    const nodeId = cache.get(groupId, coordinatorType);
    if (nodeId !== undefined) {
      try {
        return await this.findBroker({ nodeId });
      } catch {
        // Gone from the metadata: kafkajs's own lookup refreshes it.
        cache.forget(groupId, coordinatorType);
      }
    }
    const coordinator = await lookUp.call(this, args);
    if (typeof coordinator.nodeId === 'number') cache.set(groupId, coordinatorType, coordinator.nodeId);
    return coordinator;
  };
  for (const name of COORDINATOR_REQUESTS) {
    const request = Broker.prototype[name];
    if (typeof request !== 'function') throw new Error(`kafkajs Broker has no ${name}()`);
    const send = async function coordinatorRequest(this: unknown, ...args: unknown[]): Promise<unknown> {
      try {
        return await (request as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      } catch (error) {
        if (coordinatorMayHaveMoved(error)) CoordinatorCache.forgetAll();
        throw error;
      }
    };
    Broker.prototype[name] = name === 'addOffsetsToTxn' || name === 'addPartitionsToTxn' ? retryingConcurrentTransactions(send) : send;
  }
}

/**
 * A transaction begun while the coordinator still writes the previous commit's markers is
 * answered CONCURRENT_TRANSACTIONS by its first request, for a few milliseconds. Two ways
 * kafkajs made that cost more than it should:
 * - AddOffsetsToTxn (`sendOffsets`) is sent once, outside the retrier kafkajs gives the
 *   TxnOffsetCommit after it, so a transaction that starts with it — the indexer's, which commits
 *   offsets and writes nothing — failed: 74 of 200 such transactions back to back against the
 *   local broker, each costing the indexer an abort, a new producer (an epoch bump) and its
 *   batch written again.
 * - AddPartitionsToTxn is retried by the producer's retrier, whose first wait is 10 ms and
 *   doubles: transactions committed back to back — ingest's group commit and the router's under
 *   load — took 8–10 ms each, half of them waiting out a retry for markers written in 2.
 * Both are retried here, in the request: after 2 ms, doubling to at most 20 ms between tries
 * (the Java client waits 20 ms before retrying a transaction's first AddPartitionsToTxn on
 * this answer), for as long as a transaction may stay open.
 * Back-to-back transactions: 4.3 ms each instead of 8–10; offsets-only ones all commit.
 */
export function retryingConcurrentTransactions<A extends unknown[], R>(
  request: (this: unknown, ...args: A) => Promise<R>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): (this: unknown, ...args: A) => Promise<R> {
  return async function retried(this: unknown, ...args: A): Promise<R> {
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await request.apply(this, args);
      } catch (error) {
        if (protocolErrorType(error) !== 'CONCURRENT_TRANSACTIONS' || waited >= CONCURRENT_TRANSACTIONS_PATIENCE_MS) throw error;
        const delay = Math.min(CONCURRENT_TRANSACTIONS_MAX_BACKOFF_MS, CONCURRENT_TRANSACTIONS_BACKOFF_MS * 2 ** attempt);
        waited += delay;
        await sleep(delay);
      }
    }
  };
}

/** First wait after CONCURRENT_TRANSACTIONS: markers take a few milliseconds to write. */
const CONCURRENT_TRANSACTIONS_BACKOFF_MS = 2;
const CONCURRENT_TRANSACTIONS_MAX_BACKOFF_MS = 20;
/** The producers' transaction timeout: past it the coordinator aborts the transaction anyway. */
const CONCURRENT_TRANSACTIONS_PATIENCE_MS = 15_000;

interface OffsetsCluster {
  fetchTopicsOffset(this: OffsetsCluster, topics: unknown[]): Promise<unknown>;
  refreshMetadata(): Promise<void>;
}

/** Answers to ListOffsets while a partition has no leader, or another broker became it. */
const LEADER_ELECTION_ERRORS = new Set(['LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION']);
const LEADER_ELECTION_BACKOFF_MS = 50;
const LEADER_ELECTION_MAX_BACKOFF_MS = 1_000;
/**
 * Longer than a leader election takes, shorter than a consumer's session (kafkajs's consumers
 * call this too, between fetches); a broker that is away fails as before.
 */
const LEADER_ELECTION_PATIENCE_MS = 5_000;

/**
 * kafkajs's admin `fetchTopicOffsets` retries ListOffsets on UNKNOWN_TOPIC_OR_PARTITION only,
 * and gives up at once on NOT_LEADER_FOR_PARTITION — the answer for a partition created a
 * moment ago whose leader the broker has not finished electing, or one whose leadership has
 * just moved. Every service reads the end offsets of its compacted tables as it starts, right
 * after creating its topics; a CI run had ingest exit "failed to start" on this answer 1 s after
 * creating them. Here the lookup refreshes the cluster's metadata and asks again, backing off
 * from 50 ms to 1 s, for up to 5 s.
 */
export function retryingLeaderElections(
  fetchTopicsOffset: OffsetsCluster['fetchTopicsOffset'],
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): OffsetsCluster['fetchTopicsOffset'] {
  return async function electedLeaders(this: OffsetsCluster, topics: unknown[]): Promise<unknown> {
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fetchTopicsOffset.call(this, topics);
      } catch (error) {
        if (!LEADER_ELECTION_ERRORS.has(protocolErrorType(error) ?? '') || waited >= LEADER_ELECTION_PATIENCE_MS) throw error;
        const delay = Math.min(LEADER_ELECTION_MAX_BACKOFF_MS, LEADER_ELECTION_BACKOFF_MS * 2 ** attempt);
        waited += delay;
        await sleep(delay);
        // The leader it asked may be stale: the next try asks the one the metadata names now.
        await this.refreshMetadata().catch(() => undefined);
      }
    }
  };
}

interface SeekOffsetsInternals {
  size: number;
  has(topic: string, partition: number): boolean;
}

/**
 * A consumer's pending seeks (`consumer/seekOffsets.js`, a Map) are looked up by a key it
 * builds with `JSON.stringify([topic, partition])` on every `has` — and `isStale()`, which the
 * services' batch loops ask while they work through a batch and after every wait for room, is
 * such a lookup. The map is empty but for the moment after a seek, so an empty one now answers
 * at once. Profiled in test/e2e/direct-backfill (a lane full, its readers woken by every
 * settled delivery): 0.46 s of the dispatcher's 22 s, all of it building keys.
 */
function fixSeekLookups(SeekOffsets: { prototype: SeekOffsetsInternals }): void {
  const has = SeekOffsets.prototype.has;
  SeekOffsets.prototype.has = function emptyOrHas(this: SeekOffsetsInternals, topic: string, partition: number): boolean {
    return this.size > 0 && has.call(this, topic, partition);
  };
}

interface ConnectionInternals {
  send(args: { request: { apiName: string } }): Promise<unknown>;
}

/** Every request, counted as it is sent (`kafka-requests.ts`). */
function countRequests(Connection: { prototype: ConnectionInternals }): void {
  const send = Connection.prototype.send;
  Connection.prototype.send = function countedSend(this: ConnectionInternals, args) {
    noteKafkaRequest(args.request.apiName);
    return send.call(this, args);
  };
}
