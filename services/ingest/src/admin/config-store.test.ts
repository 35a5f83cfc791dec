/**
 * The store's ordering against its own config view, with the config topic and its reader in
 * memory: a record produced is seen by the view only once `catchUpToEnd` has run (and succeeded).
 */
import { describe, expect, it } from 'vitest';
import type { ProducerRecord } from 'kafkajs';
import type { ConfigEntry, Destination, Source } from '@tributary/schemas';
import { createLogger, isDestination, parseConfigKey, type ConfigState } from '@tributary/shared';
import { planDelete, planDestinationPut, planSourcePut } from './config-plan.js';
import { ConfigStore } from './config-store.js';
import { AdminError } from './errors.js';

class MemoryConfigTopic {
  readonly records: Array<{ key: string; entity: Source | Destination | null }> = [];
  /** How many records the view has read. */
  private read = 0;
  /** Whether the reader reaches the topic's end the next times it is asked (then it always does). */
  readonly reachesEnd: boolean[] = [];
  catchUps = 0;

  readonly view = {
    state: (): ConfigState => {
      const latest = new Map<string, Source | Destination | null>();
      for (const { key, entity } of this.records.slice(0, this.read)) latest.set(key, entity);
      const state: ConfigState = { sources: [], destinations: [] };
      for (const [key, entity] of latest) {
        if (entity === null || !parseConfigKey(key)) continue;
        if (isDestination(entity)) state.destinations.push(entity);
        else state.sources.push(entity);
      }
      return state;
    },
    reader: {
      catchUpToEnd: async (): Promise<void> => {
        this.catchUps++;
        if (this.reachesEnd.shift() === false) throw new Error('acme.config[0] did not reach its end offset in time');
        this.read = this.records.length;
      },
    },
  };

  readonly producer = {
    send: async ({ messages }: ProducerRecord) => {
      for (const message of messages) {
        this.records.push({ key: String(message.key), entity: message.value ? (JSON.parse(message.value.toString()) as Source | Destination) : null });
      }
      return [];
    },
  };

  readonly codec = { encode: (_topic: string, value: unknown) => Buffer.from(JSON.stringify((value as ConfigEntry).entity)) };

  store(timeoutMs = 1_000): ConfigStore {
    const { view, producer, codec } = this;
    return new ConfigStore({ view, producer, codec, topic: 'acme.config', logger: createLogger({ service: 'test', level: 'silent' }), timeoutMs });
  }
}

const rejection = async (promise: Promise<unknown>): Promise<AdminError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof AdminError)) throw new Error(`expected an AdminError, got ${String(error)}`);
  return error;
};

describe('ConfigStore', () => {
  it('plans each change against a view caught up with the topic, also after an earlier write was not read back in time', async () => {
    const topic = new MemoryConfigTopic();
    const store = topic.store();
    await store.commit((state) => planSourcePut(state, { id: 'web', writeKey: 'wk_web_0001' }, 'replace', 'web'));
    expect(topic.view.state().sources.map((source) => source.id)).toEqual(['web']);

    // The destination naming "web" is written, but the view does not read it back in time:
    // the caller is told 503, and the write stands in the topic.
    topic.reachesEnd.push(true, false);
    const unconfirmed = await rejection(
      store.commit((state) => planDestinationPut(state, { type: 'webhooks', sources: ['web'], settings: { webhooks: [{ url: 'https://hooks.example.com/a' }] } }, 'replace', 'crm')),
    );
    expect(unconfirmed.body()).toMatchObject({ code: 'kafka_unavailable', error: expect.stringContaining('it may still take effect') as unknown as string });
    expect(topic.records.map((record) => record.key)).toEqual(['source/web', 'destination/crm']);
    expect(topic.view.state().destinations).toEqual([]);

    // Planned against the stale view, deleting "web" passed the in-use check.
    const inUse = await rejection(store.commit((state) => planDelete(state, 'source', 'web')));
    expect(inUse.body()).toMatchObject({ code: 'source_in_use', destinations: ['crm'] });
    expect(topic.records).toHaveLength(2);
  });

  it('answers 503, writing nothing, when the view cannot catch up before planning', async () => {
    const topic = new MemoryConfigTopic();
    const store = topic.store();
    topic.reachesEnd.push(false);
    const refused = await rejection(store.commit((state) => planSourcePut(state, { id: 'web', writeKey: 'wk_web_0001' }, 'replace', 'web')));
    expect(refused.status).toBe(503);
    expect(refused.code).toBe('kafka_unavailable');
    expect(refused.message).toContain('nothing was written');
    expect(topic.records).toEqual([]);
    expect(topic.catchUps).toBe(1);
  });

  it('catches up before a dry run too, so it shows what applying would do now', async () => {
    const topic = new MemoryConfigTopic();
    const store = topic.store();
    topic.records.push({ key: 'source/web', entity: { id: 'web', name: 'web', writeKey: 'wk_web_0001', enabled: true } });
    const { changes, written } = await store.commit((state) => planSourcePut(state, { id: 'web', writeKey: 'wk_web_0001' }, 'replace', 'web'), { dryRun: true });
    expect(changes).toEqual([]);
    expect(written).toBe(0);
  });
});
