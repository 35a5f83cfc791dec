import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cImplementation, crc32cPortable } from './crc32c.js';

const require = createRequire(import.meta.url);
/** kafkajs's own byte-at-a-time implementation: the reference. */
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;

describe.each([
  ['crc32c', crc32c],
  ['crc32cPortable', crc32cPortable],
])('%s', (_name, checksum) => {
  it('gives the standard check value and the RFC 3720 vectors', () => {
    expect(checksum(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(checksum(Buffer.alloc(32, 0))).toBe(0x8a9136aa);
    expect(checksum(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43);
    expect(checksum(Buffer.alloc(0))).toBe(0);
  });

  it('agrees with kafkajs on every length and alignment', () => {
    const data = randomBytes(4_096);
    for (let start = 0; start < 9; start += 1) {
      for (let length = 0; length < 300; length += 1) {
        const slice = data.subarray(start, start + length);
        expect(checksum(slice)).toBe(kafkajsCrc32c(slice) >>> 0);
        expect(checksum(new Uint8Array(slice))).toBe(kafkajsCrc32c(slice) >>> 0);
      }
    }
    expect(checksum(data)).toBe(kafkajsCrc32c(data) >>> 0);
  });
});

it('uses the native implementation on the platforms the project builds for', () => {
  // linux-x64 (this machine, CI, the Docker image): a missing prebuilt module would
  // silently leave every produce request on the slower portable loop.
  expect(crc32cImplementation).toBe('native');
});
