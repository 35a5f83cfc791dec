import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { loadSchema, type ConfigEntry, type RawRecordSchema } from './index.js';
import { recordUnionHook } from './avro-record-union.js';

const raw = loadSchema('config') as unknown as avro.Schema;
const withHook = avro.Type.forSchema(raw, { typeHook: recordUnionHook });
const standard = avro.Type.forSchema(raw);

const source: ConfigEntry = { entity: { id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true }, updatedAt: 1 };
const destination: ConfigEntry = {
  entity: {
    id: 'crm',
    name: 'CRM',
    type: 'webhooks',
    sources: ['web'],
    enabled: false,
    settings: { sharedSecret: 's3cret', standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/a', headers: { 'X-Team': 'growth' } }] },
  },
  updatedAt: 2,
};

describe('unions of several records', () => {
  it('encode and decode plain Source and Destination objects', () => {
    for (const entry of [source, destination]) {
      expect(withHook.isValid(entry)).toBe(true);
      expect(withHook.fromBuffer(withHook.toBuffer(entry))).toEqual(entry);
    }
  });

  it('write the standard Avro union, readable by any reader', () => {
    expect(withHook.equals(standard)).toBe(true);
    expect(standard.fromBuffer(withHook.toBuffer(destination))).toEqual({ ...destination, entity: { 'io.tributary.v1.Destination': destination.entity } });
    expect(withHook.fromBuffer(standard.toBuffer({ ...source, entity: { 'io.tributary.v1.Source': source.entity } }))).toEqual(source);
  });

  it('refuse a value that matches no branch exactly', () => {
    expect(withHook.isValid({ entity: { id: 'x' }, updatedAt: 1 })).toBe(false);
    expect(withHook.isValid({ entity: { ...source.entity, extra: true }, updatedAt: 1 })).toBe(false);
  });

  it('resolve records written with an older schema version', () => {
    const older = structuredClone(loadSchema('config')) as RawRecordSchema;
    const union = older.fields[0]!.type as Array<{ fields: unknown[] }>;
    union[0]!.fields.pop(); // a Source without `enabled`, which the current schema defaults to true
    const writer = avro.Type.forSchema(older as unknown as avro.Schema);
    const written = writer.toBuffer({ entity: { 'io.tributary.v1.Source': { id: 'old', name: 'Old', writeKey: 'wk_old_0001' } }, updatedAt: 3 });
    expect(withHook.fromBuffer(written, withHook.createResolver(writer))).toEqual({
      entity: { id: 'old', name: 'Old', writeKey: 'wk_old_0001', enabled: true },
      updatedAt: 3,
    });
  });

  it('leave other unions alone', () => {
    const ingest = avro.Type.forSchema(loadSchema('ingest') as unknown as avro.Schema, { typeHook: recordUnionHook });
    expect(ingest.typeName).toBe('record');
    const field = (ingest as avro.types.RecordType).fields.find((f) => f.name === 'userId')!;
    expect(field.type.typeName).toBe('union:unwrapped');
  });
});
