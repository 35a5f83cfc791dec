/**
 * LZ4 frames (the format Kafka's record batches use), read and written here in plain
 * JavaScript.
 *
 * Written the way Kafka's Java client writes them (`Lz4BlockOutputStream`): independent blocks
 * of at most 64 KiB, no checksums, no content size, each block by the plain greedy compressor
 * the format describes. Read: every frame the format allows but preset dictionaries — blocks
 * independent or not, any block size, checksums and content size present or not (checksums are
 * skipped: the record batch around the frame carries its own CRC-32C), several frames in a row.
 *
 * Why not a package: the pure-JavaScript one, `lz4js`, mis-reads frames
 * with block checksums (it skips the checksum before the block instead of after), checks no
 * bounds (a corrupt block decodes to zeros instead of failing), writes frames whose blocks are
 * marked dependent, which Kafka refuses ("Dependent block stream is unsupported"), and may start
 * a match in a block's last 12 bytes, which the format forbids and the reference decoder (the
 * one Kafka and librdkafka use) rejects in a block that fills its buffer — every 64 KiB block
 * but the last. The WebAssembly ones (`lz4-wasm`) offer only the block format with a size of
 * their own in front, and the rest are native addons (`lz4`, `lz4-napi`).
 */

const FRAME_MAGIC = 0x184d2204;
/** Skippable frames (0x184D2A50–0x184D2A5F): a size, then bytes no decoder reads. */
const SKIPPABLE_MAGIC = 0x184d2a50;
const SKIPPABLE_MASK = 0xfffffff0;
/** FLG: version 01, blocks independent; no block checksum, content size or content checksum. */
const FRAME_FLG = 0x60;
/** BD: blocks of at most 64 KiB (id 4), as Kafka's Java client writes them. */
const FRAME_BD = 0x40;
/**
 * HC: the second byte of XXH32(FLG, BD; seed 0). Constant, since FLG and BD are: the header is
 * 04 22 4D 18 60 40 82, byte for byte the Java client's (compression-codecs.test.ts checks it).
 */
const FRAME_HC = 0x82;
export const LZ4_BLOCK_BYTES = 64 * 1024;
/** FLG bits a reader must honour. */
const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION = 0x40;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_DICTIONARY = 0x01;
/** BD's block maximum sizes, by id (4–7). */
const BLOCK_MAX_BYTES: Readonly<Record<number, number>> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };
/** The high bit of a block's size: the block is stored as it is. */
const UNCOMPRESSED_BLOCK = 0x80000000;

const MIN_MATCH = 4;
/** The format's end-of-block rules: the last 5 bytes are literals, and no match starts in the last 12. */
const LAST_LITERALS = 5;
const MATCH_START_LIMIT = 12;
const MAX_OFFSET = 65_535;
const HASH_BITS = 16;
/** The most a frame's declared content size makes the reader allocate up front. */
const CONTENT_SIZE_HINT_LIMIT = 64 * 1024 * 1024;

/** One LZ4 frame holding `input`. */
export function lz4Frame(input: Uint8Array): Buffer {
  const blocks = Math.ceil(input.length / LZ4_BLOCK_BYTES);
  // Header, then per block a size and at most the block itself (stored when compressing does not pay), then the end mark.
  const out = Buffer.allocUnsafe(7 + blocks * (4 + LZ4_BLOCK_BYTES) + 4);
  out.writeUInt32LE(FRAME_MAGIC, 0);
  out[4] = FRAME_FLG;
  out[5] = FRAME_BD;
  out[6] = FRAME_HC;
  let at = 7;
  const scratch = new Uint8Array(LZ4_BLOCK_BYTES + Math.ceil(LZ4_BLOCK_BYTES / 255) + 16);
  const table = new Int32Array(1 << HASH_BITS);
  for (let start = 0; start < input.length; start += LZ4_BLOCK_BYTES) {
    const block = input.subarray(start, Math.min(input.length, start + LZ4_BLOCK_BYTES));
    const size = compressBlock(block, scratch, table);
    if (size < block.length) {
      out.writeUInt32LE(size, at);
      out.set(scratch.subarray(0, size), at + 4);
      at += 4 + size;
    } else {
      out.writeUInt32LE((UNCOMPRESSED_BLOCK | block.length) >>> 0, at);
      out.set(block, at + 4);
      at += 4 + block.length;
    }
  }
  out.writeUInt32LE(0, at);
  return out.subarray(0, at + 4);
}

const read32 = (bytes: Uint8Array, at: number): number => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);

const hash = (sequence: number): number => Math.imul(sequence, 2654435761) >>> (32 - HASH_BITS);

/**
 * One block in LZ4's block format into `out` (which holds at least `block.length` +
 * `block.length / 255` + 16 bytes); returns the bytes written. Matches refer only to this
 * block: the frame says its blocks are independent.
 */
export function compressBlock(block: Uint8Array, out: Uint8Array, table: Int32Array): number {
  table.fill(-1);
  const end = block.length;
  let written = 0;
  let anchor = 0;
  for (let at = 0; at <= end - MATCH_START_LIMIT; ) {
    const sequence = read32(block, at);
    const slot = hash(sequence);
    const candidate = table[slot]!;
    table[slot] = at;
    if (candidate < 0 || at - candidate > MAX_OFFSET || read32(block, candidate) !== sequence) {
      at++;
      continue;
    }
    let length = MIN_MATCH;
    while (at + length < end - LAST_LITERALS && block[candidate + length] === block[at + length]) length++;
    written = writeSequence(out, written, block, anchor, at - anchor, at - candidate, length);
    at += length;
    anchor = at;
  }
  return writeSequence(out, written, block, anchor, end - anchor, 0, 0);
}

/** A token, its literals and, unless `matchLength` is 0 (the block's last sequence), its match. */
function writeSequence(out: Uint8Array, at: number, block: Uint8Array, literalsStart: number, literals: number, offset: number, matchLength: number): number {
  const token = at++;
  const extraMatch = matchLength === 0 ? 0 : matchLength - MIN_MATCH;
  out[token] = (Math.min(literals, 15) << 4) | Math.min(extraMatch, 15);
  at = writeLength(out, at, literals);
  out.set(block.subarray(literalsStart, literalsStart + literals), at);
  at += literals;
  if (matchLength === 0) return at;
  out[at++] = offset & 0xff;
  out[at++] = offset >>> 8;
  return writeLength(out, at, extraMatch);
}

/** The bytes that follow a token's nibble of 15: the rest of the length, 255 at a time. */
function writeLength(out: Uint8Array, at: number, length: number): number {
  if (length < 15) return at;
  let rest = length - 15;
  for (; rest >= 255; rest -= 255) out[at++] = 255;
  out[at++] = rest;
  return at;
}

/** A frame the reader cannot take: corrupt, cut short, or using what the reader does not do. */
export class Lz4FrameError extends Error {
  constructor(message: string) {
    super(`LZ4: ${message}`);
    this.name = 'Lz4FrameError';
  }
}

/**
 * What one or more LZ4 frames in a row hold, at most `maxBytes` of it: a frame of a few hundred
 * kilobytes may say gigabytes, and the reader must refuse it, not try.
 */
export function lz4Unframe(input: Uint8Array, maxBytes = Number.MAX_SAFE_INTEGER): Buffer {
  const output = new Output(Math.min(input.length * 4, maxBytes), maxBytes);
  let at = 0;
  while (at < input.length) {
    need(input, at, 4, 'a frame header');
    const magic = readU32(input, at);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      need(input, at + 4, 4, 'a skippable frame');
      at += 8 + readU32(input, at + 4);
      if (at > input.length) throw new Lz4FrameError('a skippable frame runs past the input');
      continue;
    }
    at = readFrame(input, at, output);
  }
  return output.result();
}

/** Reads the frame at `at` into `output`; returns where the next one starts. */
function readFrame(input: Uint8Array, at: number, output: Output): number {
  if (readU32(input, at) !== FRAME_MAGIC) throw new Lz4FrameError(`no frame magic at byte ${at}`);
  need(input, at + 4, 3, 'a frame descriptor');
  const flg = input[at + 4]!;
  const bd = input[at + 5]!;
  if ((flg & FLG_VERSION_MASK) !== FLG_VERSION) throw new Lz4FrameError(`frame version ${flg >>> 6} is not 1`);
  if ((flg & FLG_DICTIONARY) !== 0) throw new Lz4FrameError('frames with a preset dictionary are not supported');
  const maxBlock = BLOCK_MAX_BYTES[(bd >>> 4) & 7];
  if (maxBlock === undefined) throw new Lz4FrameError(`block size id ${(bd >>> 4) & 7} is not 4–7`);
  at += 6;
  if ((flg & FLG_CONTENT_SIZE) !== 0) {
    need(input, at, 8, 'the content size');
    // A hint only, and bounded: the blocks say how much there really is.
    output.reserve(Math.min(readU32(input, at) + readU32(input, at + 4) * 2 ** 32, CONTENT_SIZE_HINT_LIMIT), true);
    at += 8;
  }
  at += 1; // the header checksum: some old Kafka clients wrote it wrong, and nothing rests on it
  output.startFrame();
  for (;;) {
    need(input, at, 4, 'a block size');
    const word = readU32(input, at);
    at += 4;
    if (word === 0) break;
    const stored = (word & UNCOMPRESSED_BLOCK) !== 0;
    const size = (word & ~UNCOMPRESSED_BLOCK) >>> 0;
    if (size > maxBlock) throw new Lz4FrameError(`a block of ${size} bytes is past the frame's ${maxBlock}`);
    need(input, at, size, 'a block');
    // A block holds at most the frame's block size once decompressed, as it does stored.
    output.startBlock(maxBlock);
    if (stored) output.append(input.subarray(at, at + size));
    else decompressBlock(input, at, at + size, output);
    at += size;
    if ((flg & FLG_BLOCK_CHECKSUM) !== 0) at += 4;
  }
  if ((flg & FLG_CONTENT_CHECKSUM) !== 0) at += 4;
  if (at > input.length) throw new Lz4FrameError('a checksum runs past the input');
  return at;
}

/**
 * One block in LZ4's block format, from `input[start, end)`. Matches may reach back into the
 * frame's earlier blocks (a frame of dependent blocks needs that; one of independent blocks
 * never does it), never before the frame's first byte of output.
 */
function decompressBlock(input: Uint8Array, start: number, end: number, output: Output): void {
  let at = start;
  for (;;) {
    const token = input[at++]!;
    let literals = token >>> 4;
    if (literals === 15) ({ length: literals, at } = readLength(input, at, end, literals));
    if (at + literals > end) throw new Lz4FrameError('literals run past their block');
    output.append(input.subarray(at, at + literals));
    at += literals;
    if (at === end) return;
    if (at + 2 > end) throw new Lz4FrameError('a match offset runs past its block');
    const offset = input[at]! | (input[at + 1]! << 8);
    at += 2;
    let length = token & 15;
    if (length === 15) ({ length, at } = readLength(input, at, end, length));
    output.copyMatch(offset, length + MIN_MATCH);
  }
}

/** A length past a token's 15: bytes of 255 and a last one below it, added. */
function readLength(input: Uint8Array, at: number, end: number, length: number): { length: number; at: number } {
  for (;;) {
    if (at >= end) throw new Lz4FrameError('a length runs past its block');
    const more = input[at++]!;
    length += more;
    if (more !== 255) return { length, at };
  }
}

function need(input: Uint8Array, at: number, bytes: number, what: string): void {
  if (at + bytes > input.length) throw new Lz4FrameError(`the input ends inside ${what} (byte ${at} of ${input.length})`);
}

const readU32 = (bytes: Uint8Array, at: number): number => read32(bytes, at) >>> 0;

/** The decompressed bytes, in one buffer grown as needed (a match may copy from anywhere before). */
class Output {
  private bytes: Buffer;
  private length = 0;
  /** Where the current frame's output starts: its matches reach no further back. */
  private frameStart = 0;
  /** How far the current block may fill the output. */
  private blockEnd = Number.MAX_SAFE_INTEGER;

  constructor(
    capacity: number,
    private readonly maxBytes: number,
  ) {
    this.bytes = Buffer.allocUnsafe(Math.max(1024, capacity));
  }

  startFrame(): void {
    this.frameStart = this.length;
    this.blockEnd = Number.MAX_SAFE_INTEGER;
  }

  startBlock(maxBlock: number): void {
    this.blockEnd = this.length + maxBlock;
  }

  /** Room for `more` bytes (a hint, up to the limit, when `hint`). */
  reserve(more: number, hint = false): void {
    if (this.length + more > this.maxBytes) {
      if (hint) return;
      throw new Lz4FrameError(`the frames decompress to more than ${this.maxBytes} bytes`);
    }
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.min(this.maxBytes, Math.max(this.length + more, this.bytes.length * 2)));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  private grow(more: number): void {
    if (this.length + more > this.blockEnd) throw new Lz4FrameError(`a block decompresses to more than the frame's block size`);
    this.reserve(more);
  }

  append(bytes: Uint8Array): void {
    this.grow(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  copyMatch(offset: number, length: number): void {
    if (offset === 0 || offset > this.length - this.frameStart) throw new Lz4FrameError(`a match reaches ${offset} bytes back, before the start of its frame`);
    this.grow(length);
    const bytes = this.bytes;
    let from = this.length - offset;
    let to = this.length;
    // An overlapping match repeats what it copies: a byte at a time then, a block at a time otherwise.
    if (offset >= length) bytes.copyWithin(to, from, from + length);
    else for (const stop = to + length; to < stop; ) bytes[to++] = bytes[from++]!;
    this.length += length;
  }

  result(): Buffer {
    return this.bytes.subarray(0, this.length);
  }
}
