import fc from 'fast-check';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { javaCompatiblePartitioner, murmur2 } from './partitioner.js';

const require = createRequire(import.meta.url);
/** kafkajs's Long-based implementation, which its DefaultPartitioner uses: the reference. */
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer | string) => number;

const metadata = (count: number, leaderless: number[] = []): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: leaderless.includes(partitionId) ? -1 : 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));

/** Keys as producers send them: short ids, any Unicode (lone surrogates too), long strings, bytes. */
const keys = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\ud800'), minLength: 300, maxLength: 600 }),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
);

describe('murmur2', () => {
  it("gives the Java client's values (Kafka's UtilsTest)", () => {
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, expected] of cases) {
      expect(murmur2(key)).toBe(expected);
      expect(murmur2(Buffer.from(key))).toBe(expected);
      expect(kafkajsMurmur2(key)).toBe(expected);
    }
  });

  it('agrees with kafkajs on any key, string or bytes, of any length', () => {
    fc.assert(
      fc.property(keys, (key) => {
        expect(murmur2(key)).toBe(kafkajsMurmur2(key));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('javaCompatiblePartitioner', () => {
  it('places every keyed record, and every record with its own partition, where kafkajs does', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ key: keys, partition: fc.option(fc.nat(40), { nil: undefined }) }), { minLength: 1, maxLength: 50 }), fc.integer({ min: 1, max: 64 }), (messages, count) => {
        const ours = javaCompatiblePartitioner();
        const theirs = Partitioners.DefaultPartitioner();
        const partitionMetadata = metadata(count);
        for (const message of messages) {
          const args = { topic: 't', partitionMetadata, message: { ...message, value: null } };
          expect(ours(args)).toBe(theirs(args));
        }
      }),
    );
  });

  it('sends records without a key round-robin over the partitions that have a leader', () => {
    const partition = javaCompatiblePartitioner();
    const partitionMetadata = metadata(6, [1, 4]);
    const placed = Array.from({ length: 8 }, () => partition({ topic: 't', partitionMetadata, message: { value: 'v' } }));
    expect(new Set(placed)).toEqual(new Set([0, 2, 3, 5]));
    for (let i = 4; i < 8; i++) expect(placed[i]).toBe(placed[i - 4]);
    // With no leader anywhere, any partition rather than none.
    const none = metadata(3, [0, 1, 2]);
    expect(partition({ topic: 'u', partitionMetadata: none, message: { value: 'v' } })).toBeLessThan(3);
  });

  it('keeps a round-robin per topic, and notices new metadata', () => {
    const partition = javaCompatiblePartitioner();
    const six = metadata(6);
    const a = Array.from({ length: 6 }, () => partition({ topic: 'a', partitionMetadata: six, message: { value: 'v' } }));
    expect(new Set(a).size).toBe(6);
    const onlyTwo = metadata(6, [0, 1, 2, 3]);
    for (let i = 0; i < 10; i++) expect([4, 5]).toContain(partition({ topic: 'a', partitionMetadata: onlyTwo, message: { value: 'v' } }));
  });
});
