import { describe, expect, it } from 'vitest';
import type { Destination, IngestMessage, Source } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { DedupState } from './dedup.js';
import { InvalidMessage } from './message.js';
import type { ConfigLookup } from './route-chunk.js';
import { configFilteredSources, consumedOffsets, planTransaction, recordCount, type PartitionChunk } from './transaction-plan.js';

const NOW = Date.parse('2026-11-21T10:00:05.000Z');
const INGEST = 'ns.ingest.v1';

const web: Source = { id: 'web', name: 'Web', writeKey: 'wk_web_123', enabled: true };
const crm: Destination = {
  id: 'crm',
  name: 'crm',
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/x', headers: {} }] },
};
const config: ConfigLookup = {
  source: (id) => (id === web.id ? web : undefined),
  destinationsForSource: (id) => (crm.sources.includes(id) ? [crm] : []),
};

const newState = () => new DedupState({ windowMs: 86_400_000, maxEntries: 1000, maxBytes: 1e9 });

function chunk(partition: number, firstOffset: number, messages: Array<IngestMessage | InvalidMessage>, topic = INGEST, readAt = NOW): PartitionChunk {
  const records = messages.map((entry, index) => {
    const offset = String(firstOffset + index);
    const raw = { key: null, value: null, timestamp: '0' };
    return entry instanceof InvalidMessage ? { offset, raw, invalid: entry } : { offset, raw, message: entry };
  });
  return { topic, partition, records, routed: records.length, bytes: 0, nextOffset: String(firstOffset + messages.length), readAt };
}

const track = (messageId: string): IngestMessage => ({ ...FIXTURES.track, messageId });

describe('planTransaction', () => {
  it('routes none of the diverted records and lists them, as read, for the overflow lane; their offsets still commit', () => {
    const plain = chunk(0, 10, [track('a'), track('b'), track('c')]);
    const records = plain.records.map((record, index) => (index === 1 && 'message' in record ? { ...record, diverted: true, raw: { key: Buffer.from('k'), value: Buffer.from('v'), timestamp: '123' } } : record));
    const plan = planTransaction([{ ...plain, records }], config, newState().claims(NOW));
    expect(plan.deliveries.map((d) => d.messageId)).toEqual(['a', 'c']);
    expect(plan.diverted).toEqual([{ raw: { key: Buffer.from('k'), value: Buffer.from('v'), timestamp: '123' }, sourceId: 'web' }]);
    expect(plan.offsets).toEqual([{ topic: INGEST, partitions: [{ partition: 0, offset: '13' }] }]);
  });

  it('routes every chunk, keeps one outcome per chunk in order, and lists all deliveries', () => {
    const chunks = [chunk(0, 10, [track('a'), track('b')]), chunk(3, 500, [new InvalidMessage('undecodable', 'garbage'), track('c')])];
    const plan = planTransaction(chunks, config, newState().claims(NOW));
    expect(plan.outcomes.map((outcome) => outcome.deliveries.map((d) => d.messageId))).toEqual([['a', 'b'], ['c']]);
    expect(plan.outcomes[1]!.invalid.map(({ offset }) => offset)).toEqual(['500']);
    expect(plan.deliveries.map((d) => d.deliveryId)).toEqual(['crm/web/a', 'crm/web/b', 'crm/web/c']);
  });

  it('forwards a messageId repeated on two partitions of one transaction once, and writes one dedup entry', () => {
    const claims = newState().claims(NOW);
    const plan = planTransaction([chunk(0, 0, [track('same')]), chunk(1, 0, [track('same'), track('other')])], config, claims);
    expect(plan.deliveries.map((d) => d.deliveryId)).toEqual(['crm/web/same', 'crm/web/other']);
    expect(plan.outcomes.map(({ duplicates }) => duplicates)).toEqual([0, 1]);
    expect(claims.records()).toEqual([{ firstSeenAt: NOW, keys: ['web/same', 'web/other'] }]);
  });

  it('drops what an earlier committed transaction forwarded, and remembers nothing of an uncommitted one', () => {
    const state = newState();
    const committed = state.claims(NOW);
    planTransaction([chunk(0, 0, [track('first')])], config, committed);
    committed.commit();
    planTransaction([chunk(2, 0, [track('aborted')])], config, state.claims(NOW));

    const plan = planTransaction([chunk(1, 0, [track('first'), track('aborted')])], config, state.claims(NOW + 1));
    expect(plan.deliveries.map((d) => d.deliveryId)).toEqual(['crm/web/aborted']);
  });

  it('sends the next offset of every partition of the transaction', () => {
    const plan = planTransaction([chunk(4, 7, [track('x')]), chunk(0, 100, [track('y'), track('z')])], config, newState().claims(NOW));
    expect(plan.offsets).toEqual([
      {
        topic: INGEST,
        partitions: [
          { partition: 4, offset: '8' },
          { partition: 0, offset: '102' },
        ],
      },
    ]);
  });
});

describe('consumedOffsets', () => {
  it('lists a partition once, at the highest next offset of its chunks, compared as integers', () => {
    const offsets = consumedOffsets([
      { ...chunk(1, 0, []), nextOffset: '9' },
      { ...chunk(1, 0, []), nextOffset: '10' },
      { ...chunk(1, 0, []), nextOffset: '9007199254740993' },
      { ...chunk(1, 0, []), nextOffset: '9007199254740992' },
    ]);
    expect(offsets).toEqual([{ topic: INGEST, partitions: [{ partition: 1, offset: '9007199254740993' }] }]);
  });

  it('groups partitions by topic', () => {
    expect(consumedOffsets([chunk(0, 0, [track('a')], 'one'), chunk(0, 5, [track('b')], 'two'), chunk(1, 3, [track('c')], 'one')])).toEqual([
      { topic: 'one', partitions: [{ partition: 0, offset: '1' }, { partition: 1, offset: '4' }] },
      { topic: 'two', partitions: [{ partition: 0, offset: '6' }] },
    ]);
  });
});

describe('recordCount', () => {
  it('counts the ingest records of all chunks, invalid ones included', () => {
    expect(recordCount([chunk(0, 0, [track('a'), new InvalidMessage('undecodable', 'x')]), chunk(1, 0, [track('b')])])).toBe(3);
  });
});

describe('configFilteredSources', () => {
  const received = (messageId: string, receivedAt: number, sourceId = 'web'): IngestMessage => ({ ...track(messageId), receivedAt, sourceId });
  const sourcesOf = (lookup: ConfigLookup, chunks: PartitionChunk[]) => configFilteredSources(planTransaction(chunks, lookup, newState().claims(NOW)), chunks);

  it('lists the sources with a message filtered for config, as of its newest such message — not a message\'s own integrations object', () => {
    expect(sourcesOf(config, [chunk(0, 0, [received('routed', NOW - 10)])])).toEqual(new Map());
    expect(sourcesOf(config, [chunk(0, 0, [received('a', NOW - 3_000, 'app'), received('b', NOW - 1_000, 'app')]), chunk(1, 0, [received('c', NOW - 2_000, 'new')])])).toEqual(
      new Map([
        ['app', NOW - 1_000],
        ['new', NOW - 2_000],
      ]),
    );
    const disabled: ConfigLookup = { ...config, destinationsForSource: () => [{ ...crm, enabled: false }] };
    expect(sourcesOf(disabled, [chunk(0, 0, [received('d', NOW - 5)])])).toEqual(new Map([['web', NOW - 5]]));
    expect(sourcesOf(config, [chunk(0, 0, [{ ...received('opted out', NOW - 5), integrations: '{"All":false}' }])])).toEqual(new Map());
  });

  it('asks no later than the chunk was read: ingest\'s clock running ahead does not make the wait longer', () => {
    expect(sourcesOf(config, [chunk(0, 0, [received('ahead', NOW + 60_000, 'app')], INGEST, NOW)])).toEqual(new Map([['app', NOW]]));
  });

  it('leaves out diverted records', () => {
    const plain = chunk(0, 0, [received('moved', NOW, 'app'), received('kept', NOW - 4_000, 'app')]);
    const records = plain.records.map((record, index) => (index === 0 && 'message' in record ? { ...record, diverted: true } : record));
    expect(sourcesOf(config, [{ ...plain, records }])).toEqual(new Map([['app', NOW - 4_000]]));
  });
});
