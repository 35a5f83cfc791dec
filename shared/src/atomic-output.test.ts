import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { writeGroup, writeKindOf } from './atomic-output.js';
import type { ProduceRecord } from './produce-batcher.js';

const record = (key: string, topic?: string): ProduceRecord => ({ key: Buffer.from(key), value: Buffer.from(`value of ${key}`), ...(topic ? { topic } : {}) });

function recordingWriters() {
  const calls: Array<{ kind: 'single'; topic: string; message: Message } | { kind: 'transaction'; records: ProduceRecord[] }> = [];
  return {
    calls,
    writers: {
      single: (topic: string, message: Message) => {
        calls.push({ kind: 'single', topic, message });
        return Promise.resolve();
      },
      transaction: (records: ProduceRecord[]) => {
        calls.push({ kind: 'transaction', records });
        return Promise.resolve();
      },
    },
  };
}

describe('writeGroup', () => {
  it('writes one record by itself, to its own topic or else the default one', async () => {
    const { calls, writers } = recordingWriters();
    await writeGroup([record('a')], 'ingest', writers);
    await writeGroup([record('b', 'overflow')], 'ingest', writers);
    expect(calls).toEqual([
      { kind: 'single', topic: 'ingest', message: { key: Buffer.from('a'), value: Buffer.from('value of a') } },
      { kind: 'single', topic: 'overflow', message: { key: Buffer.from('b'), value: Buffer.from('value of b') } },
    ]);
  });

  it('writes two records or more in one transaction, whatever their topics', async () => {
    const { calls, writers } = recordingWriters();
    const same = [record('a'), record('b')];
    const mixed = [record('c'), record('d', 'overflow'), record('e')];
    await writeGroup(same, 'ingest', writers);
    await writeGroup(mixed, 'ingest', writers);
    expect(calls).toEqual([
      { kind: 'transaction', records: same },
      { kind: 'transaction', records: mixed },
    ]);
  });

  it('passes the writer\'s failure on', async () => {
    const failing = { single: () => Promise.reject(new Error('broker said no')), transaction: () => Promise.resolve() };
    await expect(writeGroup([record('a')], 'ingest', failing)).rejects.toThrow('broker said no');
  });

  it('names the kind by the same rule', () => {
    expect(writeKindOf(1)).toBe('single');
    expect(writeKindOf(2)).toBe('transaction');
    expect(writeKindOf(5000)).toBe('transaction');
  });
});
