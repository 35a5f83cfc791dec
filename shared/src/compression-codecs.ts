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
  uncompress(input: Buffer, maxLength?: number): Buffer;
}
type Fzstd = typeof import('fzstd');

const require = createRequire(import.meta.url);
let snappyjs: SnappyJs | undefined;
let fzstd: Fzstd | undefined;


/**
 * The most one record batch may decompress to. A fetched batch is bounded (the broker's
 * `max.message.bytes`, 1 MB by default), what it decompresses to is not: a valid ZSTD batch of
 * run-length blocks turns 8 KB into 256 MB, and every consumer of the topic would run out of
 * memory on it. A batch past this is refused — its partition stops there, with this error in
 * the consumer's log, rather than the process dying — and 64 MiB is some 60 times the broker's
 * default limit, past what records of JSON compress to.
 */
export const MAX_DECOMPRESSED_BATCH_BYTES = 64 * 1024 * 1024;

export const lz4Codec: KafkajsCodec = {
  async compress({ buffer }) {
    return lz4Frame(buffer);
  },
  async decompress(buffer) {
    return lz4Unframe(buffer, MAX_DECOMPRESSED_BATCH_BYTES);
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
    // uncompress checks the length a block declares against the bound before allocating it.
    if (buffer.length < XERIAL_HEADER_BYTES || !buffer.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) return snappyjs.uncompress(buffer, MAX_DECOMPRESSED_BATCH_BYTES);
    const blocks: Buffer[] = [];
    let total = 0;
    for (let at = XERIAL_HEADER_BYTES; at < buffer.length; ) {
      if (at + 4 > buffer.length) throw new Error(`snappy: a block's size is cut off at byte ${at} of ${buffer.length}`);
      const size = buffer.readInt32BE(at);
      at += 4;
      if (size < 0 || at + size > buffer.length) throw new Error(`snappy: a block of ${size} bytes at byte ${at} runs past the ${buffer.length} of the batch`);
      const block = snappyjs.uncompress(buffer.subarray(at, at + size), MAX_DECOMPRESSED_BATCH_BYTES - total);
      total += block.length;
      blocks.push(block);
      at += size;
    }
    return Buffer.concat(blocks, total);
  },
};

export const zstdCodec: KafkajsCodec = {
  async compress() {
    throw new Error('ZSTD compression is not supported for writing: Tributary reads ZSTD batches (fzstd) but writes none; produce uncompressed, GZIP, Snappy or LZ4');
  },
  async decompress(buffer) {
    fzstd ??= require('fzstd') as Fzstd;
    // fzstd allocates each frame's window (or, for a single-segment frame, its content) as its
    // header declares it, up to 2 GB: the headers are checked first. Then streamed, so that the
    // total is counted as it grows (each chunk copied: fzstd may reuse what it hands over).
    checkZstdFrames(buffer, MAX_DECOMPRESSED_BATCH_BYTES);
    const chunks: Buffer[] = [];
    let total = 0;
    const stream = new fzstd.Decompress((chunk) => {
      total += chunk.length;
      if (total > MAX_DECOMPRESSED_BATCH_BYTES) throw new Error(`zstd: the batch decompresses to more than ${MAX_DECOMPRESSED_BATCH_BYTES} bytes`);
      chunks.push(Buffer.from(chunk));
    });
    stream.push(buffer, true);
    return Buffer.concat(chunks, total);
  },
};

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_SKIPPABLE_MAGIC = 0x184d2a50;

/**
 * Walks the ZSTD frames of `input` (RFC 8878 §3.1) and refuses one whose window — or, for a
 * single-segment frame, whose declared content — is larger than `maxBytes`: what a decoder
 * allocates for it. Blocks are walked by their headers only; their content is fzstd's to check.
 */
export function checkZstdFrames(input: Uint8Array, maxBytes: number): void {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const need = (at: number, count: number): void => {
    if (at + count > bytes.length) throw new Error(`zstd: the input ends inside a frame (byte ${at} of ${bytes.length})`);
  };
  let at = 0;
  while (at < bytes.length) {
    need(at, 4);
    const magic = bytes.readUInt32LE(at);
    if ((magic & 0xfffffff0) >>> 0 === ZSTD_SKIPPABLE_MAGIC) {
      need(at + 4, 4);
      at += 8 + bytes.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new Error(`zstd: no frame magic at byte ${at}`);
    need(at + 4, 1);
    const descriptor = bytes[at + 4]!;
    at += 5;
    const contentSizeFlag = descriptor >>> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    const checksum = (descriptor & 0x04) !== 0;
    const dictionaryIdBytes = [0, 1, 2, 4][descriptor & 3]!;
    let window = 0;
    if (!singleSegment) {
      need(at, 1);
      const exponent = bytes[at]! >>> 3;
      const base = 2 ** (10 + exponent);
      window = base + (base / 8) * (bytes[at]! & 7);
      at += 1;
    }
    at += dictionaryIdBytes;
    const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag]!;
    need(at, contentSizeBytes);
    let contentSize = 0;
    if (contentSizeBytes === 1) contentSize = bytes[at]!;
    else if (contentSizeBytes === 2) contentSize = bytes.readUInt16LE(at) + 256;
    else if (contentSizeBytes === 4) contentSize = bytes.readUInt32LE(at);
    else if (contentSizeBytes === 8) contentSize = bytes.readUInt32LE(at) + bytes.readUInt32LE(at + 4) * 2 ** 32;
    at += contentSizeBytes;
    if (singleSegment ? contentSize > maxBytes : window > maxBytes) {
      throw new Error(`zstd: a frame asks for ${singleSegment ? contentSize : window} bytes of memory; a batch may decompress to ${maxBytes} at most`);
    }
    for (let last = false; !last; ) {
      need(at, 3);
      const header = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
      last = (header & 1) === 1;
      const type = (header >>> 1) & 3;
      at += 3 + (type === 1 ? 1 : header >>> 3);
    }
    if (checksum) at += 4;
  }
  if (at > bytes.length) throw new Error('zstd: the input ends inside a frame');
}

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
