import fc from 'fast-check';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { applyKafkajsFixes, recordBatchCrcFixed, retryingConcurrentTransactions, retryingLeaderElections } from './kafkajs-fixes.js';
import { kafkaRequestsSent } from './kafka-requests.js';

const require = createRequire(import.meta.url);
type Queue = { pending: unknown[]; throttledUntil: number; throttleCheckTimeoutId: NodeJS.Timeout | null; scheduleCheckPendingRequests(): void; checkPendingRequests(): void };
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;

const queues: Queue[] = [];
function queue(): Queue {
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const created = new RequestQueue({ instrumentationEmitter: null, maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:1', logger, isConnected: () => true });
  queues.push(created);
  return created;
}
afterEach(() => {
  for (const created of queues.splice(0)) if (created.throttleCheckTimeoutId) clearTimeout(created.throttleCheckTimeoutId);
});

describe('kafkajs RequestQueue fix', () => {
  it('arms no timer when nothing is pending or throttled (kafkajs 2.2.4 looped on a 1 ms timer for ever)', () => {
    expect(applyKafkajsFixes()).toBe(true);
    const idle = queue();
    idle.checkPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('still re-checks a queue with a request waiting, and wakes when a throttle ends', async () => {
    applyKafkajsFixes();
    const waiting = queue();
    let checks = 0;
    waiting.pending.push({});
    waiting.checkPendingRequests = () => void checks++;
    waiting.scheduleCheckPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(checks).toBe(1);

    const throttled = queue();
    throttled.throttledUntil = Date.now() + 1_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });
});

type EncoderInstance = { buffer: Buffer; writeVarInt(value: number): EncoderInstance; writeUVarInt(value: number): EncoderInstance; writeVarLong(value: unknown): EncoderInstance; writeBuffer(value: Buffer): EncoderInstance; writeInt32(value: number): EncoderInstance };
const Encoder = require('kafkajs/src/protocol/encoder.js') as new (initialSize?: number) => EncoderInstance;
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => { readVarInt(): number; readVarLong(): { toString(): string }; readInt32(): number };

const values = [0, 1, -1, 63, -64, 64, 127, 128, 300, -300, 16_383, 16_384, 2 ** 21, 2 ** 28, 2 ** 30 - 1, -(2 ** 30), 2 ** 31 - 1, -(2 ** 31)];
/** Written by kafkajs's own methods: this runs when the file is imported, before any test applies the fixes. */
const stockVarBytes = (() => {
  const stock = new Encoder();
  for (const value of values) stock.writeVarInt(value);
  for (const value of values) stock.writeVarLong(value);
  stock.writeVarLong(2 ** 40);
  stock.writeVarLong(-(2 ** 45));
  return Buffer.from(stock.buffer);
})();

describe('kafkajs Encoder fixes', () => {
  it('writes the same varints and varlongs as kafkajs, and reads them back', () => {
    applyKafkajsFixes();
    const fixed = new Encoder();
    for (const value of values) fixed.writeVarInt(value);
    for (const value of values) fixed.writeVarLong(value);
    fixed.writeVarLong(2 ** 40);
    fixed.writeVarLong(-(2 ** 45));
    expect(fixed.buffer.equals(stockVarBytes)).toBe(true);

    const decoder = new Decoder(fixed.buffer);
    for (const value of values) expect(decoder.readVarInt()).toBe(value);
    for (const value of values) expect(decoder.readVarLong().toString()).toBe(String(value));
    expect(decoder.readVarLong().toString()).toBe(String(2 ** 40));
    expect(decoder.readVarLong().toString()).toBe(String(-(2 ** 45)));
  });

  it('grows from an empty buffer and keeps every byte written across growths', () => {
    applyKafkajsFixes();
    const encoder = new Encoder();
    const chunk = Buffer.from(Array.from({ length: 700 }, (_, index) => index % 251));
    for (let round = 0; round < 20; round += 1) encoder.writeInt32(round).writeBuffer(chunk);
    const bytes = encoder.buffer;
    expect(bytes).toHaveLength(20 * 704);
    for (let round = 0; round < 20; round += 1) {
      expect(bytes.readInt32BE(round * 704)).toBe(round);
      expect(bytes.subarray(round * 704 + 4, (round + 1) * 704).equals(chunk)).toBe(true);
    }
  });

  it('gives record batches the CRC-32C kafkajs would have, through the faster function', async () => {
    expect(applyKafkajsFixes()).toBe(true);
    expect(recordBatchCrcFixed()).toBe(true);
    const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: object) => unknown;
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: object) => Promise<EncoderInstance> };
    const reference = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;
    const records = Array.from({ length: 10 }, (_, index) => Record({ offsetDelta: index, key: Buffer.from(`k${index}`), value: Buffer.alloc(300 + index, index), headers: { h: 'v' } }));
    const batch = (await RecordBatch({ records, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000, transactional: true })).buffer;
    // FirstOffset int64, Length int32, PartitionLeaderEpoch int32, Magic int8, CRC uint32, then what it covers.
    const crc = batch.readUInt32BE(8 + 4 + 4 + 1);
    expect(crc).toBe(reference(batch.subarray(8 + 4 + 4 + 1 + 4)) >>> 0);
  });
});

/** A second copy of kafkajs's Encoder module, outside the require cache the fixes patch. */
const StockEncoder = (() => {
  const path = require.resolve('kafkajs/src/protocol/encoder.js');
  const cached = require.cache[path];
  delete require.cache[path];
  try {
    return require(path) as EncoderClassUnderTest;
  } finally {
    require.cache[path] = cached;
  }
})();

interface EncoderUnderTest {
  buffer: Buffer;
  size(): number;
  writeInt32(value: number): EncoderUnderTest;
  writeString(value: string): EncoderUnderTest;
  writeBytes(value: Buffer | null): EncoderUnderTest;
  writeVarIntBytes(value: Buffer): EncoderUnderTest;
  writeVarInt(value: number): EncoderUnderTest;
  writeBuffer(value: Buffer): EncoderUnderTest;
  writeEncoder(value: EncoderUnderTest): EncoderUnderTest;
  writeEncoderArray(value: EncoderUnderTest[]): EncoderUnderTest;
  writeArray(value: unknown[]): EncoderUnderTest;
}
type EncoderClassUnderTest = new () => EncoderUnderTest;

/** A way to fill an encoder, run alike on kafkajs's Encoder and the fixed one. */
type Step =
  | { op: 'int32'; value: number }
  | { op: 'string'; value: string }
  | { op: 'bytes' | 'varIntBytes' | 'buffer'; length: number; seed: number }
  | { op: 'nullBytes' }
  | { op: 'varInt'; value: number }
  | { op: 'read' }
  | { op: 'encoder'; steps: Step[]; after: Step[] }
  | { op: 'encoderArray' | 'array'; items: Step[][] };

const bytesOf = (length: number, seed: number): Buffer => {
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
};

/** Runs the steps; returns every `buffer` read along the way (copied: later writes must not change them). */
function fill(Class: EncoderClassUnderTest, encoder: EncoderUnderTest, steps: Step[], reads: Buffer[]): EncoderUnderTest {
  for (const step of steps) {
    switch (step.op) {
      case 'int32': encoder.writeInt32(step.value); break;
      case 'string': encoder.writeString(step.value); break;
      case 'bytes': encoder.writeBytes(bytesOf(step.length, step.seed)); break;
      case 'varIntBytes': encoder.writeVarIntBytes(bytesOf(step.length, step.seed)); break;
      case 'buffer': encoder.writeBuffer(bytesOf(step.length, step.seed)); break;
      case 'nullBytes': encoder.writeBytes(null); break;
      case 'varInt': encoder.writeVarInt(step.value); break;
      case 'read': reads.push(Buffer.from(encoder.buffer), Buffer.from([encoder.size() & 0xff])); break;
      case 'encoder': {
        const child = fill(Class, new Class(), step.steps, reads);
        encoder.writeEncoder(child);
        // Writing on into an encoder already written into another leaves the other as it was.
        fill(Class, child, step.after, reads);
        reads.push(Buffer.from(child.buffer));
        break;
      }
      case 'encoderArray':
      case 'array': {
        const children = step.items.map((items) => fill(Class, new Class(), items, reads));
        if (step.op === 'array') encoder.writeArray(children);
        else encoder.writeEncoderArray(children);
        break;
      }
    }
  }
  return encoder;
}

const longOrShort = fc.oneof(fc.nat(300), fc.integer({ min: 3_000, max: 20_000 }));
const { steps: stepsArbitrary } = fc.letrec<{ step: Step; steps: Step[] }>((tie) => ({
  step: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ op: fc.constant('int32' as const), value: fc.integer() }),
    fc.record({ op: fc.constant('string' as const), value: fc.string({ maxLength: 40 }) }),
    fc.record({ op: fc.constantFrom('bytes' as const, 'varIntBytes' as const, 'buffer' as const), length: longOrShort, seed: fc.nat(255) }),
    fc.record({ op: fc.constant('nullBytes' as const) }),
    fc.record({ op: fc.constant('varInt' as const), value: fc.integer() }),
    fc.record({ op: fc.constant('read' as const) }),
    fc.record({ op: fc.constant('encoder' as const), steps: tie('steps') as fc.Arbitrary<Step[]>, after: tie('steps') as fc.Arbitrary<Step[]> }),
    fc.record({ op: fc.constantFrom('encoderArray' as const, 'array' as const), items: fc.array(tie('steps') as fc.Arbitrary<Step[]>, { maxLength: 6 }) }),
  ),
  steps: fc.array(tie('step') as fc.Arbitrary<Step>, { minLength: 1, maxLength: 8 }),
}));

describe('kafkajs Encoder copies', () => {
  it('writes exactly the bytes kafkajs writes, however encoders are nested, read and written on', () => {
    applyKafkajsFixes();
    const FixedEncoder = Encoder as unknown as EncoderClassUnderTest;
    expect(FixedEncoder).not.toBe(StockEncoder);
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        const stockReads: Buffer[] = [];
        const fixedReads: Buffer[] = [];
        const stock = fill(StockEncoder, new StockEncoder(), steps, stockReads);
        const fixed = fill(FixedEncoder, new FixedEncoder(), steps, fixedReads);
        expect(fixed.size()).toBe(stock.size());
        expect(fixed.buffer.equals(stock.buffer)).toBe(true);
        expect(fixedReads.length).toBe(stockReads.length);
        for (const [index, read] of fixedReads.entries()) expect(read.equals(stockReads[index]!)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('holds a long record batch by reference on its way into a request, and joins it once', async () => {
    applyKafkajsFixes();
    const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: object) => unknown;
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: object) => Promise<EncoderUnderTest & { parts?: Buffer[] }> };
    const records = Array.from({ length: 100 }, (_, index) => Record({ offsetDelta: index, key: Buffer.from(`k${index}`), value: bytesOf(1_000, index) }));
    const batch = await RecordBatch({ records, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000, transactional: true });
    expect(batch.parts?.length).toBeGreaterThan(0);
    const FixedEncoder = Encoder as unknown as EncoderClassUnderTest;
    const request = new FixedEncoder().writeInt32(7).writeEncoder(batch as EncoderUnderTest) as EncoderUnderTest & { parts?: Buffer[] };
    expect(request.parts?.at(-1)).toBe(batch.parts?.at(-1));
    const bytes = request.buffer;
    expect(bytes.length).toBe(4 + batch.size());
    expect(request.parts).toBeUndefined();
    expect(request.buffer.buffer).toBe(bytes.buffer);
  });
});

describe('kafkajs coordinator lookups', () => {
  type Coordinator = { nodeId: number | null };
  type FakeCluster = {
    lookups: number;
    retrier: (work: (bail: (error: unknown) => never, retryCount: number, retryTime: number) => Promise<unknown>) => Promise<unknown>;
    findGroupCoordinatorMetadata(args: { groupId: string }): Promise<{ coordinator: { nodeId: number } }>;
    findBroker(args: { nodeId: number }): Promise<Coordinator>;
  };
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator(this: FakeCluster, args: { groupId: string; coordinatorType?: number }): Promise<Coordinator> } };
  const Broker = require('kafkajs/src/broker/index.js') as { prototype: { endTxn(this: object, args: object): Promise<unknown> } };

  /** kafkajs's Cluster with its network parts replaced: counts how often the coordinator is asked for. */
  function cluster(nodeId = 1): FakeCluster {
    return {
      lookups: 0,
      retrier: (work) => work((error) => { throw error; }, 0, 0),
      async findGroupCoordinatorMetadata() {
        this.lookups++;
        return { coordinator: { nodeId } };
      },
      async findBroker({ nodeId: id }) {
        return { nodeId: id };
      },
    };
  }

  it('asks the cluster once per group and type, not before every request', async () => {
    applyKafkajsFixes();
    const fake = cluster();
    for (let n = 0; n < 5; n++) {
      expect(await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'tx-1', coordinatorType: 1 })).toEqual({ nodeId: 1 });
      expect(await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'group-1' })).toEqual({ nodeId: 1 });
    }
    expect(fake.lookups).toBe(2);
  });

  it('asks again after any request to a coordinator failed', async () => {
    applyKafkajsFixes();
    const fake = cluster();
    await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'tx-2', coordinatorType: 1 });
    // A Broker with no connection: kafkajs's endTxn throws, as it would on NOT_COORDINATOR.
    await expect(Broker.prototype.endTxn.call({}, { transactionalId: 'tx-2' })).rejects.toThrow();
    await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'tx-2', coordinatorType: 1 });
    expect(fake.lookups).toBe(2);
  });

  it('asks again when the remembered broker is gone from the metadata', async () => {
    applyKafkajsFixes();
    const fake = cluster(7);
    await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'tx-3', coordinatorType: 1 });
    let gone = true;
    fake.findBroker = async ({ nodeId }) => {
      if (gone) {
        gone = false;
        throw new Error('broker not found');
      }
      return { nodeId };
    };
    expect(await Cluster.prototype.findGroupCoordinator.call(fake, { groupId: 'tx-3', coordinatorType: 1 })).toEqual({ nodeId: 7 });
    expect(fake.lookups).toBe(2);
  });
});

describe('AddOffsetsToTxn and AddPartitionsToTxn retried on CONCURRENT_TRANSACTIONS', () => {
  const concurrent = () => Object.assign(new Error('another concurrent operation'), { type: 'CONCURRENT_TRANSACTIONS' });

  it('retries until the coordinator has finished the previous commit, backing off', async () => {
    const waits: number[] = [];
    let calls = 0;
    const request = retryingConcurrentTransactions(
      async (answer: string) => {
        calls++;
        if (calls <= 3) throw concurrent();
        return answer;
      },
      async (ms) => void waits.push(ms),
    );
    await expect(request('added')).resolves.toBe('added');
    expect(calls).toBe(4);
    expect(waits).toEqual([2, 4, 8]);
  });

  it('passes any other error on at once', async () => {
    let calls = 0;
    const fenced = Object.assign(new Error('fenced'), { type: 'INVALID_PRODUCER_EPOCH' });
    const request = retryingConcurrentTransactions(async () => {
      calls++;
      throw fenced;
    }, async () => undefined);
    await expect(request()).rejects.toBe(fenced);
    expect(calls).toBe(1);
  });

  it('gives up once a transaction could no longer be open (15 s of waits)', async () => {
    let waited = 0;
    const request = retryingConcurrentTransactions(async () => {
      throw concurrent();
    }, async (ms) => void (waited += ms));
    await expect(request()).rejects.toMatchObject({ type: 'CONCURRENT_TRANSACTIONS' });
    expect(waited).toBeGreaterThanOrEqual(15_000);
    expect(waited).toBeLessThan(15_000 + 20);
  });

  it('is what kafkajs Broker.addOffsetsToTxn and addPartitionsToTxn do once the fixes are applied', async () => {
    applyKafkajsFixes();
    const Broker = require('kafkajs/src/broker/index.js') as { prototype: { addOffsetsToTxn: { name: string }; addPartitionsToTxn: { name: string }; endTxn: { name: string } } };
    expect(Broker.prototype.addOffsetsToTxn.name).toBe('retried');
    expect(Broker.prototype.addPartitionsToTxn.name).toBe('retried');
    expect(Broker.prototype.endTxn.name).toBe('coordinatorRequest');
  });
});

describe('kafkajs request counting', () => {
  it('counts each request a Connection sends, by API', async () => {
    applyKafkajsFixes();
    const Connection = require('kafkajs/src/network/connection.js') as { prototype: { send(this: object, args: object): Promise<unknown> } };
    const before = kafkaRequestsSent().get('ApiVersions') ?? 0;
    // No socket behind it: kafkajs's send fails after the count, as a request to a lost broker does.
    await Connection.prototype.send.call({}, { request: { apiName: 'ApiVersions' } }).catch(() => undefined);
    expect(kafkaRequestsSent().get('ApiVersions')).toBe(before + 1);
  });
});

describe("kafkajs's seek lookups", () => {
  type Seeks = Map<string, unknown> & { getKey(topic: string, partition: number): string; set(topic: string, partition: number, offset: string): void; has(topic: string, partition: number): boolean; pop(topic: string, partition: number): unknown };
  const SeekOffsets = require('kafkajs/src/consumer/seekOffsets.js') as new () => Seeks;

  it('answers an empty map without building a key, and finds a pending seek as before', () => {
    expect(applyKafkajsFixes()).toBe(true);
    const seeks = new SeekOffsets();
    let keys = 0;
    const getKey = seeks.getKey.bind(seeks);
    seeks.getKey = (topic, partition) => {
      keys++;
      return getKey(topic, partition);
    };
    expect(seeks.has('t', 0)).toBe(false);
    expect(keys).toBe(0);
    seeks.set('t', 0, '42');
    expect(seeks.has('t', 0)).toBe(true);
    expect(seeks.has('t', 1)).toBe(false);
    expect(seeks.pop('t', 0)).toEqual({ topic: 't', partition: 0, offset: '42' });
    expect(seeks.has('t', 0)).toBe(false);
  });
});

describe('ListOffsets retried while a partition elects its leader', () => {
  const notLeader = () => Object.assign(new Error('This server is not the leader for that topic-partition'), { type: 'NOT_LEADER_FOR_PARTITION', retriable: true });

  it('refreshes the metadata and asks again until the leader answers, backing off', async () => {
    const waits: number[] = [];
    let calls = 0;
    const cluster = { refreshes: 0, refreshMetadata: async () => void cluster.refreshes++ };
    const fetch = retryingLeaderElections(async function (this: unknown, topics: unknown[]) {
      expect(this).toBe(cluster);
      calls++;
      if (calls <= 3) throw notLeader();
      return topics;
    }, async (ms) => void waits.push(ms));
    await expect(fetch.call(cluster as never, ['t'])).resolves.toEqual(['t']);
    expect(calls).toBe(4);
    expect(waits).toEqual([50, 100, 200]);
    expect(cluster.refreshes).toBe(3);
  });

  it('passes any other error on at once, and gives up after 5 s of waits', async () => {
    const cluster = { refreshMetadata: async () => undefined };
    const gone = Object.assign(new Error('Connection refused'), { name: 'KafkaJSConnectionError' });
    let calls = 0;
    const refused = retryingLeaderElections(async () => {
      calls++;
      throw gone;
    }, async () => undefined);
    await expect(refused.call(cluster as never, [])).rejects.toBe(gone);
    expect(calls).toBe(1);

    let waited = 0;
    const never = retryingLeaderElections(async () => {
      throw notLeader();
    }, async (ms) => void (waited += ms));
    await expect(never.call(cluster as never, [])).rejects.toMatchObject({ type: 'NOT_LEADER_FOR_PARTITION' });
    expect(waited).toBeGreaterThanOrEqual(5_000);
    expect(waited).toBeLessThan(5_000 + 1_000);
  });

  it("is what kafkajs's Cluster.fetchTopicsOffset does once the fixes are applied", () => {
    applyKafkajsFixes();
    const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { fetchTopicsOffset: { name: string } } };
    expect(Cluster.prototype.fetchTopicsOffset.name).toBe('electedLeaders');
  });
});
