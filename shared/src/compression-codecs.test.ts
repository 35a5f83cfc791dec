import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CompressionCodecs, CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { createKafka } from './kafka.js';
import { checkZstdFrames, COMPRESSION_TYPES, lz4Codec, MAX_DECOMPRESSED_BATCH_BYTES, registerCompressionCodecs, snappyCodec, zstdCodec, type KafkajsCodec, type KafkajsCodecTable } from './compression-codecs.js';
import { LZ4_BLOCK_BYTES } from './lz4-frame.js';

const require = createRequire(import.meta.url);

/**
 * What the fixtures hold, 189,224 bytes: made with the reference tools (lz4 1.9.4, zstd 1.5.4)
 * from this text — `lz4 -c` (one 4 MiB block, content checksum), `lz4 -c -BD -B4 -BX
 * --content-size` (dependent 64 KiB blocks, block checksums, content size), `zstd -c`, and
 * `zstd -c --no-check` from a pipe (no content size in the frame, as a stream writes it).
 */
function fixtureText(): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) lines.push(JSON.stringify({ n: i % 40, event: 'Order Completed', user: `user-${i % 40}`, total: (i % 40) * 7 }));
  return Buffer.from(lines.join('\n'));
}
const fixture = (name: string): Buffer => readFileSync(new URL(`./__fixtures__/compressed/${name}`, import.meta.url));

/** Bytes that compress well, that do not, and a mix, of sizes around the codecs' block sizes. */
function samples(): Buffer[] {
  let seed = 7;
  const random = (length: number) => Buffer.from(Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) & 0xff));
  return [
    Buffer.alloc(0),
    Buffer.from('k'),
    Buffer.from('twelve bytes'),
    Buffer.from('a'.repeat(13)),
    fixtureText(),
    random(LZ4_BLOCK_BYTES),
    random(LZ4_BLOCK_BYTES + 1),
    Buffer.concat([random(5_000), Buffer.alloc(200_000, 'x'), random(70_000), Buffer.from('the end, repeated: the end')]),
  ];
}

const encoder = (buffer: Buffer) => ({ buffer });

/**
 * Walks an LZ4 frame as Kafka's Java client reads it (Lz4BlockInputStream): magic, FLG with the
 * blocks independent, the header checksum, blocks within the declared size — and, in each
 * compressed block, the format's end rules, which the reference decoder enforces for a block
 * that fills its buffer: no match starts in the last 12 bytes, the last 5 are literals.
 */
function checkKafkaLz4Frame(frame: Buffer): void {
  // Magic, FLG (version 1, blocks independent), BD (64 KiB) and their checksum, XXH32-derived
  // (the Java client's header, byte for byte; the broker checks it in compression-codecs.it.test.ts).
  expect(frame.subarray(0, 7).toString('hex')).toBe('04224d18604082');
  let at = 7;
  for (;;) {
    const word = frame.readUInt32LE(at);
    at += 4;
    if (word === 0) break;
    const stored = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    expect(size).toBeLessThanOrEqual(LZ4_BLOCK_BYTES);
    if (!stored) checkBlockRules(frame.subarray(at, at + size));
    at += size;
  }
  expect(at).toBe(frame.length);
}

function checkBlockRules(block: Buffer): void {
  let at = 0;
  let produced = 0;
  const sequences: Array<{ matchStart: number; matchEnd: number }> = [];
  for (;;) {
    const token = block[at++]!;
    let literals = token >>> 4;
    if (literals === 15) for (let more = 255; more === 255; ) literals += more = block[at++]!;
    at += literals;
    produced += literals;
    if (at >= block.length) break;
    at += 2;
    let length = (token & 15) + 4;
    if ((token & 15) === 15) for (let more = 255; more === 255; ) length += more = block[at++]!;
    sequences.push({ matchStart: produced, matchEnd: produced + length });
    produced += length;
  }
  for (const { matchStart, matchEnd } of sequences) {
    expect(matchStart).toBeLessThanOrEqual(produced - 12);
    expect(matchEnd).toBeLessThanOrEqual(produced - 5);
  }
}

describe('compression codecs for kafkajs', () => {
  it('are in kafkajs’s table once a client is made: LZ4, Snappy and ZSTD batches are read, not refused', async () => {
    createKafka({ brokers: ['127.0.0.1:1'], clientId: 'codecs-test', logger: createLogger({ service: 'test', level: 'silent' }) });
    // kafkajs looks the codec up in this table at every batch it reads.
    const table = CompressionCodecs as unknown as Record<number, () => KafkajsCodec>;
    expect(table[CompressionTypes.LZ4]!()).toBe(lz4Codec);
    expect(table[CompressionTypes.Snappy]!()).toBe(snappyCodec);
    expect(table[CompressionTypes.ZSTD]!()).toBe(zstdCodec);
    expect([COMPRESSION_TYPES.GZIP, COMPRESSION_TYPES.Snappy, COMPRESSION_TYPES.LZ4, COMPRESSION_TYPES.ZSTD]).toEqual([
      CompressionTypes.GZIP,
      CompressionTypes.Snappy,
      CompressionTypes.LZ4,
      CompressionTypes.ZSTD,
    ]);
    // Registered whichever client made first: the table is kafkajs's, shared by all.
    new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
    expect(table[CompressionTypes.LZ4]!()).toBe(lz4Codec);
  });

  it('registers into the table it is given and leaves GZIP alone', () => {
    const gzip = () => 'kafkajs gzip';
    const table: KafkajsCodecTable = { [COMPRESSION_TYPES.GZIP]: gzip };
    registerCompressionCodecs(table);
    registerCompressionCodecs(table);
    expect(table[COMPRESSION_TYPES.GZIP]).toBe(gzip);
    expect(Object.keys(table).sort()).toEqual(['1', '2', '3', '4']);
  });

  it.each([
    ['LZ4', lz4Codec],
    ['Snappy', snappyCodec],
  ] as const)('%s: what it compresses decompresses to the same bytes', async (_name, codec) => {
    for (const sample of samples()) {
      const compressed = await codec.compress(encoder(sample));
      const back = await codec.decompress(compressed);
      expect(Buffer.isBuffer(back)).toBe(true);
      expect(back.equals(sample)).toBe(true);
    }
  });

  it('LZ4: writes frames Kafka’s Java client reads — independent 64 KiB blocks, header checksum, the block format’s end rules — and compresses', async () => {
    for (const sample of samples()) checkKafkaLz4Frame(await lz4Codec.compress(encoder(sample)));
    const text = fixtureText();
    expect((await lz4Codec.compress(encoder(text))).length).toBeLessThan(text.length / 10);
  });

  it('LZ4: reads the reference tool’s frames, dependent blocks, checksums and content size included', async () => {
    const text = fixtureText();
    expect((await lz4Codec.decompress(fixture('lz4-cli-default.lz4'))).equals(text)).toBe(true);
    expect((await lz4Codec.decompress(fixture('lz4-cli-dependent-checksums-size.lz4'))).equals(text)).toBe(true);
  });

  it('Snappy: writes snappy-java’s framing, as the Java client does, and reads that and a raw block', async () => {
    const text = fixtureText();
    const framed = await snappyCodec.compress(encoder(text));
    expect(framed.subarray(0, 16).toString('hex')).toBe('82534e415050590000000001' + '00000001');
    expect(framed.length).toBeLessThan(text.length / 5);
    const snappyjs = require('snappyjs') as { compress(input: Buffer): Buffer };
    expect((await snappyCodec.decompress(snappyjs.compress(text))).equals(text)).toBe(true);
    // A framed batch cut short is an error, not a shorter batch.
    await expect(snappyCodec.decompress(framed.subarray(0, framed.length - 3))).rejects.toThrow(/runs past/);
  });

  it('ZSTD: reads the reference tool’s frames, with and without the content size, and refuses to write', async () => {
    const text = fixtureText();
    expect((await zstdCodec.decompress(fixture('zstd-cli-default.zst'))).equals(text)).toBe(true);
    expect((await zstdCodec.decompress(fixture('zstd-cli-streamed.zst'))).equals(text)).toBe(true);
    // Two frames back to back, as a stream may leave them.
    const twice = await zstdCodec.decompress(Buffer.concat([fixture('zstd-cli-default.zst'), fixture('zstd-cli-streamed.zst')]));
    expect(twice.equals(Buffer.concat([text, text]))).toBe(true);
    await expect(zstdCodec.compress(encoder(text))).rejects.toThrow(/ZSTD compression is not supported for writing/);
  });
});

describe('decompression bombs', () => {
  /** A ZSTD frame of `blocks` run-length blocks of 128 KiB each (4 bytes apiece), window 128 KiB. */
  function zstdRuns(blocks: number): Buffer {
    const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3])];
    for (let index = 0; index < blocks; index++) {
      const header = (index === blocks - 1 ? 1 : 0) | (1 << 1) | ((128 * 1024) << 3);
      parts.push(Buffer.from([header & 0xff, (header >>> 8) & 0xff, (header >>> 16) & 0xff, 0x7b]));
    }
    return Buffer.concat(parts);
  }

  it('reads a ZSTD batch of run-length blocks within the bound, and refuses one past it', async () => {
    expect((await zstdCodec.decompress(zstdRuns(8))).equals(Buffer.alloc(8 * 128 * 1024, 0x7b))).toBe(true);
    const blocks = MAX_DECOMPRESSED_BATCH_BYTES / (128 * 1024) + 1;
    await expect(zstdCodec.decompress(zstdRuns(blocks))).rejects.toThrow(/more than/);
  });

  it('refuses a ZSTD frame asking for a window or a content larger than the bound, before fzstd allocates it', () => {
    const hugeWindow = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (31 - 10) << 3, 0x01, 0x00, 0x00]);
    expect(() => checkZstdFrames(hugeWindow, MAX_DECOMPRESSED_BATCH_BYTES)).toThrow(/asks for 2147483648 bytes/);
    // Single segment, an 8-byte content size of 1 GiB.
    const hugeContent = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0]), Buffer.from([0, 0, 0, 0x40, 0, 0, 0, 0]), Buffer.from([0x01, 0x00, 0x00])]);
    expect(() => checkZstdFrames(hugeContent, MAX_DECOMPRESSED_BATCH_BYTES)).toThrow(/asks for 1073741824 bytes/);
    expect(() => checkZstdFrames(fixture('zstd-cli-default.zst'), MAX_DECOMPRESSED_BATCH_BYTES)).not.toThrow();
    expect(() => checkZstdFrames(fixture('zstd-cli-streamed.zst'), MAX_DECOMPRESSED_BATCH_BYTES)).not.toThrow();
  });

  it('refuses a Snappy block declaring more than the bound, before allocating it', async () => {
    // A raw Snappy block whose length varint says 600 MB.
    const declared = Buffer.from([0x80, 0x8c, 0x8d, 0x9e, 0x02, 0x00]);
    await expect(snappyCodec.decompress(declared)).rejects.toThrow(/too big/);
  });
});
