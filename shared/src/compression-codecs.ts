/**
 * The record-batch compressions kafkajs lacks. kafkajs reads and writes GZIP itself and
 * throws KafkaJSNotImplemented for LZ4, Snappy and ZSTD. A batch in one of those — what a
 * Java or librdkafka producer writing the ingest topic directly sends with
 * `compression.type=lz4|snappy|zstd`, or what the broker stores when a topic's own
 * `compression.type` says so — made the fetch throw; the consumer crashed, was restarted at the
 * same offset and crashed again, for good, and every partition behind that fetch stood still.
 * `createKafka` (kafka.ts), where every service makes its client, registers these first.
 *
 * Chosen to install anywhere `npm ci` runs, with no native compiler and no prebuilt binary:
 * - LZ4: our own `lz4-frame.ts`, which reads every frame Kafka clients write and writes them as
 *   the Java client does. No package would do: `kafkajs-lz4` wraps `lz4`, a native addon
 *   compiled at install, and the pure-JavaScript `lz4js` mis-reads frames with block checksums
 *   and writes frames Kafka refuses (lz4-frame.ts says more).
 * - Snappy: `snappyjs`, plain JavaScript, the most used of the pure-JavaScript Snappys (also under
 *   kafkajs's own `kafkajs-snappy`, whose framing this follows: that package pins an older
 *   snappyjs and joins chunks with a copy per chunk). Kafka's Java client writes snappy-java's
 *   "xerial" framing; librdkafka and others write one raw Snappy block: both are read. Written
 *   as the Java client writes it.
 * - ZSTD: `fzstd`, plain JavaScript (by fflate's author), decompression only. Node 20's zlib
 *   has no Zstandard, and the encoders for JavaScript are native addons or large WebAssembly
 *   builds. Tributary never writes ZSTD, so compressing is refused with an error that says so.
 *
 * Each library is loaded at its first batch: most processes never meet these compressions.
 */
import { createRequire } from 'node:module';
import { lz4Frame, lz4Unframe } from './lz4-frame.js';

/** What kafkajs asks of a codec (an entry of its `CompressionCodecs` returns one). */
export interface KafkajsCodec {
  /** kafkajs passes its encoder of the batch's records; only `buffer` is read. */
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

/** kafkajs's `CompressionTypes`, the ids the batch attributes carry. */
export const COMPRESSION_TYPES = { GZIP: 1, Snappy: 2, LZ4: 3, ZSTD: 4 } as const;

/** The part of snappyjs used here (it ships no types). */
interface SnappyJs {
  compress(input: Buffer): Buffer;
  uncompress(input: Buffer): Buffer;
}
type Fzstd = typeof import('fzstd');

const require = createRequire(import.meta.url);
let snappyjs: SnappyJs | undefined;
let fzstd: Fzstd | undefined;

/** A Buffer over the same memory (kafkajs's decoder reads with Buffer's methods). */
const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

export const lz4Codec: KafkajsCodec = {
  async compress({ buffer }) {
    return lz4Frame(buffer);
  },
  async decompress(buffer) {
    return lz4Unframe(buffer);
  },
};

/** snappy-java's stream header: magic, then its version and the oldest compatible version (1 and 1). */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
/** snappy-java's default block: what the Java client's batches are cut into. */
const XERIAL_BLOCK_BYTES = 32 * 1024;

export const snappyCodec: KafkajsCodec = {
  async compress({ buffer }) {
    snappyjs ??= require('snappyjs') as SnappyJs;
    const header = Buffer.alloc(XERIAL_HEADER_BYTES);
    XERIAL_MAGIC.copy(header);
    header.writeInt32BE(1, 8);
    header.writeInt32BE(1, 12);
    const parts: Buffer[] = [header];
    for (let start = 0; start < buffer.length; start += XERIAL_BLOCK_BYTES) {
      const block = snappyjs.compress(buffer.subarray(start, start + XERIAL_BLOCK_BYTES));
      const size = Buffer.alloc(4);
      size.writeInt32BE(block.length);
      parts.push(size, block);
    }
    return Buffer.concat(parts);
  },
  async decompress(buffer) {
    snappyjs ??= require('snappyjs') as SnappyJs;
    if (buffer.length < XERIAL_HEADER_BYTES || !buffer.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) return snappyjs.uncompress(buffer);
    const blocks: Buffer[] = [];
    for (let at = XERIAL_HEADER_BYTES; at < buffer.length; ) {
      if (at + 4 > buffer.length) throw new Error(`snappy: a block's size is cut off at byte ${at} of ${buffer.length}`);
      const size = buffer.readInt32BE(at);
      at += 4;
      if (size < 0 || at + size > buffer.length) throw new Error(`snappy: a block of ${size} bytes at byte ${at} runs past the ${buffer.length} of the batch`);
      blocks.push(snappyjs.uncompress(buffer.subarray(at, at + size)));
      at += size;
    }
    return Buffer.concat(blocks);
  },
};

export const zstdCodec: KafkajsCodec = {
  async compress() {
    throw new Error('ZSTD compression is not supported for writing: Tributary reads ZSTD batches (fzstd) but writes none; produce uncompressed, GZIP, Snappy or LZ4');
  },
  async decompress(buffer) {
    fzstd ??= require('fzstd') as Fzstd;
    return asBuffer(fzstd.decompress(buffer));
  },
};

/** kafkajs's codec table: `CompressionCodecs` as kafkajs exports it. */
export type KafkajsCodecTable = Record<number, () => unknown>;

/**
 * kafkajs's own table. Required, not imported: Node's ESM import of kafkajs (CommonJS) finds
 * only some of its exports by name, and `CompressionCodecs` is not among them.
 */
function kafkajsCodecTable(): KafkajsCodecTable {
  return (require('kafkajs') as { CompressionCodecs: KafkajsCodecTable }).CompressionCodecs;
}

/**
 * Puts LZ4, Snappy and ZSTD into kafkajs's codec table (GZIP is its own). kafkajs looks a
 * codec up at every batch, so what is registered applies to every client, even one created
 * before. Idempotent.
 */
export function registerCompressionCodecs(codecs: KafkajsCodecTable = kafkajsCodecTable()): void {
  codecs[COMPRESSION_TYPES.LZ4] = () => lz4Codec;
  codecs[COMPRESSION_TYPES.Snappy] = () => snappyCodec;
  codecs[COMPRESSION_TYPES.ZSTD] = () => zstdCodec;
}
