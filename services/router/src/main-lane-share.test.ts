import { describe, expect, it } from 'vitest';
import type { Destination, IngestMessage, Source } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { InvalidMessage } from './message.js';
import { MainLaneShare } from './main-lane-share.js';
import type { ConfigLookup, DecodedRecord } from './route-chunk.js';

const destination = (id: string, sources: string[]): Destination => ({
  id,
  name: id,
  type: 'webhooks',
  sources,
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/x', headers: {} }] },
});
const sources: Source[] = [
  { id: 'bulk', name: 'Bulk', writeKey: 'wk_bulk_123', enabled: true },
  { id: 'web', name: 'Web', writeKey: 'wk_web_123', enabled: true },
];
const destinations = [destination('one', ['bulk', 'web']), destination('two', ['web'])];
const config: ConfigLookup = {
  source: (id) => sources.find((source) => source.id === id),
  destinationsForSource: (id) => destinations.filter((d) => d.sources.includes(id)),
};

function record(sourceId: string, timestamp: number, bytes = 500): DecodedRecord {
  const message: IngestMessage = { ...FIXTURES.track, sourceId, messageId: `${sourceId}-${timestamp}-${Math.random()}` };
  return { offset: '0', raw: { key: null, value: Buffer.alloc(bytes), timestamp: String(timestamp) }, message };
}

describe('MainLaneShare', () => {
  it('moves what a source writes past its share, judged by the records’ timestamps, and leaves the others alone', () => {
    const share = new MainLaneShare(100, config);
    const now = 1_000_000;
    // A backfill: 1,000 records stamped within one second, read all at once.
    const moved = Array.from({ length: 1_000 }, (_, index) => share.diverts(record('bulk', now + index), now + 60_000)).filter(Boolean).length;
    // A full bucket (100) plus what a second of timestamps refills (about 100).
    expect(moved).toBeGreaterThan(780);
    expect(moved).toBeLessThan(820);
    // Another source at its own pace is never moved (two destinations: two units a record).
    for (let index = 0; index < 100; index++) expect(share.diverts(record('web', now + index * 20), now + 60_000)).toBe(false);
  });

  it('judges records read late by when they were written: a source within its share is not moved on catch-up', () => {
    const share = new MainLaneShare(100, config);
    const now = 2_000_000;
    // Ten minutes of a source writing 50 a second, read in one go after a restart.
    let moved = 0;
    for (let index = 0; index < 30_000; index++) if (share.diverts(record('bulk', now + index * 20), now + 700_000)) moved++;
    expect(moved).toBe(0);
  });

  it('counts a large record by its bytes, times its source’s destinations', () => {
    const share = new MainLaneShare(100, config);
    // 40 KiB to two destinations: 20 units each; five fill a full bucket, the sixth is moved.
    const results = Array.from({ length: 6 }, () => share.diverts(record('web', 5_000, 40 * 1024), 5_000));
    expect(results).toEqual([false, false, false, false, false, true]);
  });

  it('never moves an invalid record, and moves nothing at rate 0', () => {
    const share = new MainLaneShare(1, config);
    const invalid: DecodedRecord = { offset: '0', raw: { key: null, value: null, timestamp: '1' }, invalid: new InvalidMessage('not_framed', 'x') };
    for (let index = 0; index < 10; index++) expect(share.diverts(invalid, 1)).toBe(false);
    const off = new MainLaneShare(0, config);
    for (let index = 0; index < 10; index++) expect(off.diverts(record('bulk', 1), 1)).toBe(false);
  });

  it('keeps no share for a source nobody configured: its records are routed to nothing where they are', () => {
    const share = new MainLaneShare(1, config);
    // Past any share, and each with a sourceId of its own: none is moved, none is remembered.
    for (let index = 0; index < 1_000; index++) expect(share.diverts(record(`ghost-${index}`, 1_000), 1_000)).toBe(false);
    for (let index = 0; index < 1_000; index++) expect(share.diverts(record('ghost', 1_000), 1_000)).toBe(false);
    expect(share.sourcesHeld).toBe(0);
    share.diverts(record('bulk', 1_000), 1_000);
    expect(share.sourcesHeld).toBe(1);
  });

  it('judges a record without a usable timestamp by the clock', () => {
    const share = new MainLaneShare(10, config);
    const unstamped = (): DecodedRecord => ({ ...record('bulk', 0), raw: { key: null, value: Buffer.alloc(10), timestamp: '-1' } });
    const moved = Array.from({ length: 20 }, () => share.diverts(unstamped(), 7_000)).filter(Boolean).length;
    expect(moved).toBe(10);
  });
});
