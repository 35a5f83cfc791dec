import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';

const require = createRequire(import.meta.url);
/** kafkajs's own byte-at-a-time implementation: the reference. */
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;

describe('crc32c', () => {
  it('gives the standard check value and the RFC 3720 vectors', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32, 0))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it('agrees with kafkajs on every length and alignment', () => {
    const data = randomBytes(4_096);
    for (let start = 0; start < 9; start += 1) {
      for (let length = 0; length < 300; length += 1) {
        const slice = data.subarray(start, start + length);
        expect(crc32c(slice)).toBe(kafkajsCrc32c(slice) >>> 0);
      }
    }
    expect(crc32c(data)).toBe(kafkajsCrc32c(data) >>> 0);
  });
});
