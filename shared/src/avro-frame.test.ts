import avro from 'avsc';
import { avroType, type SchemaName } from '@tributary/schemas';
import { describe, expect, it } from 'vitest';
import { frameAvro, HEADER_BYTES } from './avro-frame.js';

/** What `AvroCodec.encode` wrote before: avsc's own buffer behind a separate header. */
function reference(type: avro.Type, schemaId: number, value: unknown): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(schemaId, 1);
  return Buffer.concat([header, type.toBuffer(value)]);
}

describe('frameAvro', () => {
  it("writes avsc's bytes behind the Confluent header, for random values of the pipeline's schemas", () => {
    const names: SchemaName[] = ['ingest', 'delivery', 'retry', 'dlq'];
    for (const name of names) {
      const type = avroType(name);
      for (let run = 0; run < 200; run++) {
        const value = type.random();
        const framed = frameAvro(type, 40_000 + run, value);
        expect(framed.equals(reference(type, 40_000 + run, value))).toBe(true);
        expect(type.fromBuffer(framed.subarray(HEADER_BYTES))).toEqual(type.fromBuffer(type.toBuffer(value)));
      }
    }
  });

  it('grows for a value larger than its buffer, and the next small value is framed alone', () => {
    const type = avro.Type.forSchema({ type: 'record', name: 'Big', fields: [{ name: 'text', type: 'string' }, { name: 'n', type: 'long' }] });
    for (const length of [0, 1_000, 70_000, 300_000, 5]) {
      const value = { text: 'é'.repeat(length), n: length };
      const framed = frameAvro(type, 7, value);
      expect(framed.equals(reference(type, 7, value))).toBe(true);
    }
  });

  it('returns a buffer of its own, which framing the next value leaves as it was', () => {
    const type = avro.Type.forSchema({ type: 'record', name: 'Pair', fields: [{ name: 'text', type: 'string' }] });
    const first = frameAvro(type, 1, { text: 'first' });
    const copy = Buffer.from(first);
    frameAvro(type, 2, { text: 'second, longer' });
    expect(first.equals(copy)).toBe(true);
  });

  it('throws, as avsc does, for a value that does not match the type', () => {
    const type = avro.Type.forSchema({ type: 'record', name: 'Typed', fields: [{ name: 'n', type: 'long' }] });
    expect(() => frameAvro(type, 1, { n: 'not a number' })).toThrow();
    expect(() => reference(type, 1, { n: 'not a number' })).toThrow();
  });
});
