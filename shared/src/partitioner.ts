/**
 * The partitioner of every producer: the Java client's placement of keyed records —
 * murmur2 of the key's UTF-8 bytes, made positive, modulo the topic's partition count — so
 * that records keyed the same way by other producers (the ingest topic is a public contract)
 * land on the same partition. It places every record exactly as kafkajs's
 * `Partitioners.DefaultPartitioner` does (a property test holds it to kafkajs's own code).
 *
 * Why not kafkajs's: it computes murmur2 in 64-bit `Long` objects — a dozen allocations per
 * four key bytes — and filters the partition list into a new array for every record. In the
 * bench at 1,000 events/s its murmur2 was the largest single source of heap allocation in the
 * router (14 % of its bytes) and the dispatcher (8 %), and 6 % of ingest's; here the hash is
 * 32-bit integer arithmetic (`Math.imul` wraps as Java's `int` multiplication does) over a
 * reused buffer.
 */
import type { ICustomPartitioner, PartitionerArgs, PartitionMetadata } from 'kafkajs';
import { randomBytes } from 'node:crypto';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Longest key (in UTF-8 bytes) hashed without allocating; a longer one gets its own buffer. */
const SCRATCH_BYTES = 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);

/** The Java client's `Utils.murmur2` of a key: a signed 32-bit integer. */
export function murmur2(key: Buffer | string): number {
  let data: Buffer;
  let length: number;
  if (typeof key === 'string') {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; a key that may not fit is encoded apart.
    if (key.length * 3 <= SCRATCH_BYTES) {
      data = scratch;
      length = scratch.write(key, 0, 'utf8');
    } else {
      data = Buffer.from(key, 'utf8');
      length = data.length;
    }
  } else {
    data = key;
    length = key.length;
  }
  return murmur2Bytes(data, length);
}

function murmur2Bytes(data: Buffer, length: number): number {
  let h = (SEED ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) h = Math.imul(h ^ data[whole]!, M);
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Java's `Utils.toPositive`: the sign bit cleared (not the absolute value). */
const toPositive = (x: number): number => x & 0x7fffffff;

/** The partition, of `partitions`, a keyed record goes to (the Java client's placement). */
export const partitionForKey = (key: Buffer | string, partitions: number): number => toPositive(murmur2(key)) % partitions;

/**
 * kafkajs's `DefaultPartitioner`, without its allocations: a record's own partition if it has
 * one; a keyed record by murmur2 of its key; a record without a key round-robin over the
 * partitions that have a leader (from a random start per topic), or over all when none has.
 */
export const javaCompatiblePartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  // kafkajs hands every record of a topic in one send the same metadata array.
  let ledOf: { metadata: PartitionMetadata[]; led: PartitionMetadata[] } | undefined;
  const withLeaders = (metadata: PartitionMetadata[]): PartitionMetadata[] => {
    if (ledOf?.metadata !== metadata) ledOf = { metadata, led: metadata.filter((p) => p.leader >= 0) };
    return ledOf.led;
  };
  return ({ topic, partitionMetadata, message }: PartitionerArgs): number => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) return partitionForKey(message.key, partitionMetadata.length);
    const next = (counters.get(topic) ?? randomBytes(4).readUInt32BE(0)) + 1;
    counters.set(topic, next);
    const led = withLeaders(partitionMetadata);
    if (led.length > 0) return led[toPositive(next) % led.length]!.partitionId;
    return toPositive(next) % partitionMetadata.length;
  };
};
