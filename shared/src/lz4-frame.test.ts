import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LZ4_BLOCK_BYTES, lz4Frame, Lz4FrameError, lz4Unframe } from './lz4-frame.js';

/** A frame by hand: the Java client's header, then the given blocks (stored unless `compressed`), then the end mark. */
function frame(blocks: Array<{ bytes: number[]; compressed?: boolean }>): Buffer {
  const parts = [Buffer.from('04224d18604082', 'hex')];
  for (const { bytes, compressed } of blocks) {
    const size = Buffer.alloc(4);
    size.writeUInt32LE((compressed ? bytes.length : 0x80000000 | bytes.length) >>> 0);
    parts.push(size, Buffer.from(bytes));
  }
  parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

describe('lz4Frame and lz4Unframe', () => {
  it('round-trip any bytes, repetitive or not, across block boundaries', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 3 * LZ4_BLOCK_BYTES }),
      // Runs of a few distinct bytes: long matches, overlapping ones, matches near block ends.
      fc.array(fc.record({ byte: fc.integer({ min: 0, max: 3 }), run: fc.integer({ min: 1, max: 40_000 }) }), { maxLength: 12 }).map((runs) => Uint8Array.from(runs.flatMap(({ byte, run }) => Array<number>(run).fill(byte)))),
    );
    fc.assert(
      fc.property(bytes, (input) => {
        expect(lz4Unframe(lz4Frame(input)).equals(input)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('reads frames one after another, and skips skippable frames', () => {
    const skippable = Buffer.from([0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    const joined = Buffer.concat([lz4Frame(Buffer.from('first ')), skippable, lz4Frame(Buffer.from('second'))]);
    expect(lz4Unframe(joined).toString()).toBe('first second');
  });

  it('copies an overlapping match as repeats of what it reaches back to', () => {
    // Literal "ab", then a match 2 back of 4 + 6 bytes: "ab" repeated; then the last literals.
    const block = [0x26, 0x61, 0x62, 0x02, 0x00, 0x50, 0x63, 0x63, 0x63, 0x63, 0x63];
    expect(lz4Unframe(frame([{ bytes: block, compressed: true }])).toString()).toBe('abababababab' + 'ccccc');
  });

  it('refuses corrupt or cut-short frames instead of decoding them to something', () => {
    expect(() => lz4Unframe(Buffer.from('not lz4 at all'))).toThrow(Lz4FrameError);
    const good = lz4Frame(Buffer.from('a sentence, a sentence, a sentence, and the end of it'));
    expect(() => lz4Unframe(good.subarray(0, good.length - 6))).toThrow(/ends inside|runs past/);
    // A match reaching back past the start of the output.
    expect(() => lz4Unframe(frame([{ bytes: [0x10, 0x61, 0x09, 0x00, 0x50, 1, 2, 3, 4, 5], compressed: true }]))).toThrow(/before the start/);
    // A block larger than the frame's declared maximum.
    expect(() => lz4Unframe(frame([{ bytes: Array<number>(LZ4_BLOCK_BYTES + 1).fill(0) }]))).toThrow(/past the frame's/);
    // Frames with a preset dictionary (none Kafka writes).
    expect(() => lz4Unframe(Buffer.from('04224d18614000000000000000', 'hex'))).toThrow(/preset dictionary/);
  });
});

describe('lz4Unframe bounds', () => {
  // A literal, then a match of `length` one byte back: a few bytes that say `length` + 1.
  const run = (length: number): number[] => {
    const extra = length - 4 - 15;
    const bytes = [0x1f, 0x61, 0x01, 0x00];
    let rest = extra;
    for (; rest >= 255; rest -= 255) bytes.push(255);
    bytes.push(rest, 0x10, 0x62);
    return bytes;
  };

  it('refuses a block that decompresses past the frame\'s block size', () => {
    expect(lz4Unframe(frame([{ bytes: run(1000), compressed: true }]))).toHaveLength(1002);
    expect(() => lz4Unframe(frame([{ bytes: run(LZ4_BLOCK_BYTES + 100), compressed: true }]))).toThrow(Lz4FrameError);
  });

  it('refuses frames that decompress past the bound given, before allocating it', () => {
    const blocks = Array.from({ length: 40 }, () => ({ bytes: run(60_000), compressed: true }));
    expect(lz4Unframe(frame(blocks))).toHaveLength(40 * 60_002);
    expect(() => lz4Unframe(frame(blocks), 1_000_000)).toThrow(/more than 1000000 bytes/);
  });

  it('lets no match of a frame reach into the frame before it', () => {
    const second = frame([{ bytes: [0x04, 0x01, 0x00], compressed: true }]);
    expect(() => lz4Unframe(Buffer.concat([frame([{ bytes: [0x61, 0x62] }]), second]))).toThrow(/before the start of its frame/);
  });
});
