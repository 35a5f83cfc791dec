import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { createLogger } from '@tributary/shared';
import { mapAttempts, mapMessages, type Mapped } from './plan.js';
import { openPglite } from './sql/pglite.js';
import { DeliveryLogStore } from './store/store.js';
import { testAttempt, testConfig, testDestination, testMessage, testSource } from './test-records.js';
import { ChunkWriter, DatabaseUnavailable, type IndexChunk } from './write-chunks.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const config = testConfig([testSource()], [testDestination('crm')]);
const raw = (offset: number) => ({ offset: String(offset), key: null, value: Buffer.from('x'), timestamp: '0' });
const DEEP = '{"a":' + '['.repeat(6000) + ']'.repeat(6000) + '}';

function metrics() {
  const registers = [new Registry()];
  return {
    databaseErrors: new Counter({ name: 'errors', help: 'h', labelNames: ['kind'] as const, registers }),
    batchWriteDuration: new Histogram({ name: 'duration', help: 'h', registers }),
  };
}

function chunk(topic: string, partition: number, mapped: Mapped[]): IndexChunk {
  return { topic, partition, mapped, nextOffset: '0', records: mapped.length };
}

/**
 * A message row holding the reviewer's 6,000-deep properties, as it was made before rows.ts
 * refused such fields: what a record the mapping lets through but no write can take looks like.
 */
function deepMessage(offset: number): Mapped {
  const [mapped] = mapMessages(0, [{ raw: raw(offset), value: testMessage({ messageId: 'deep' }) }], config);
  if (mapped === undefined || !('message' in mapped)) throw new Error('expected a message row');
  mapped.message.message.properties = JSON.parse(DEEP) as unknown as string;
  return mapped;
}

describe('ChunkWriter', () => {
  let store: DeliveryLogStore;
  beforeAll(async () => {
    store = new DeliveryLogStore(await openPglite(undefined));
    await store.migrate();
  });
  afterAll(async () => store.close());

  it('sets aside a record whose write throws no database error, and writes the rest of the group commit', async () => {
    const metricsSeen = metrics();
    const writer = new ChunkWriter({ store, metrics: metricsSeen, logger });
    const chunks = [
      chunk('ingest', 0, [...mapMessages(0, [{ raw: raw(1), value: testMessage({ messageId: 'before' }) }], config), deepMessage(2), ...mapMessages(0, [{ raw: raw(3), value: testMessage({ messageId: 'after' }) }], config)]),
      // Another partition's chunk in the same commit: it failed with the deep record before.
      chunk('ingest', 1, mapMessages(1, [{ raw: raw(1), value: testMessage({ messageId: 'partner' }) }], config)),
      chunk('attempts', 0, mapAttempts(0, [{ raw: raw(1), value: testAttempt({ messageId: 'partner', destinationId: 'crm', outcome: 'retry', status: 503 }) }])),
    ];
    const { counts, refused } = await writer.write(chunks);
    expect(refused).toEqual([{ topic: 'ingest', partition: 0, raw: raw(2), poison: { reason: 'unwritable', error: 'could not write it: RangeError: Maximum call stack size exceeded' } }]);
    expect(counts).toEqual({ attempts: 1, messages: 3, deliveries: 1 });
    for (const id of ['before', 'after', 'partner']) expect(await store.message(id), id).toBeDefined();
    expect(await store.message('deep')).toBeUndefined();
    expect((await metricsSeen.databaseErrors.get()).values).toEqual([{ labels: { kind: 'data' }, value: 1 }]);
  });

  it('retries (DatabaseUnavailable) when such an error comes while the database does not answer', async () => {
    const down = {
      write: async () => Promise.reject(new RangeError('Maximum call stack size exceeded')),
      ping: async () => Promise.reject(new Error('no answer')),
    };
    const writer = new ChunkWriter({ store: down, metrics: metrics(), logger });
    await expect(writer.write([chunk('ingest', 0, mapMessages(0, [{ raw: raw(1), value: testMessage({ messageId: 'm' }) }], config))])).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it('retries a lost connection without blaming a record', async () => {
    let pinged = false;
    const lost = {
      write: async () => Promise.reject(new Error('Connection terminated unexpectedly')),
      ping: async () => void (pinged = true),
    };
    const writer = new ChunkWriter({ store: lost, metrics: metrics(), logger });
    await expect(writer.write([chunk('ingest', 0, mapMessages(0, [{ raw: raw(1), value: testMessage({ messageId: 'm' }) }], config))])).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect(pinged).toBe(false);
  });
});
