import { describe, expect, it } from 'vitest';
import type { Destination, IngestMessage, Source } from '@tributary/schemas';
import { FIXTURES } from './__fixtures__/messages.js';
import { InvalidMessage } from './message.js';
import { MAX_DIVERTED_BYTES, MainLaneShare } from './main-lane-share.js';
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
    // A backfill: 1,000 records stamped within one second, read all at once: a second's share (100) is routed.
    const moved = Array.from({ length: 1_000 }, (_, index) => share.diverts(record('bulk', now + index), now + 60_000)).filter(Boolean).length;
    expect(moved).toBe(900);
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

  it('is not thrown off by one record stamped an hour ahead: traffic well within the share stays in the main lane', () => {
    const share = new MainLaneShare(2_000, config);
    const now = Date.UTC(2026, 10, 29, 12);
    // A producer with a fast clock (brokers take up to an hour ahead by default). With one clock
    // per source, the newest stamp, this moved every record of the next hour.
    expect(share.diverts(record('web', now + 3_600_000, 500), now)).toBe(false);
    let moved = 0;
    // Then 100 records a second (two units each, a tenth of the share) for ten minutes.
    for (let index = 0; index < 60_000; index++) if (share.diverts(record('web', now + index * 10, 500), now + index * 10)) moved++;
    expect(moved).toBe(0);
  });

  it('judges a partition read behind another by when its records were written: neither moves the other’s records', () => {
    const share = new MainLaneShare(2_000, config);
    const now = Date.UTC(2026, 10, 29, 12);
    // The source writes 1,000 units a second (half its share), 500 to each of two partitions.
    // Partition B comes back after its owner died with 30 s of backlog, read while A's live
    // records keep arriving: with one clock, B's backlog refilled nothing and drained the share,
    // and A's live records were moved with most of B's.
    let live = now;
    let movedB = 0;
    let movedA = 0;
    for (let index = 0; index < 15_000; index++) {
      if (share.diverts(record('bulk', now - 30_000 + index * 2, 400), live)) movedB++;
      if (index % 15 === 0) {
        live += 1;
        if (share.diverts(record('bulk', live, 400), live)) movedA++;
      }
    }
    expect({ movedA, movedB }).toEqual({ movedA: 0, movedB: 0 });
  });

  it('judges a record stamped ahead as written now: a burst spread over future stamps is still held to the share', () => {
    const share = new MainLaneShare(10, config);
    const now = 9_000_000;
    // Each alone in its second of record time, were its stamp believed.
    const moved = Array.from({ length: 30 }, (_, index) => share.diverts(record('bulk', now + 2_000 * (index + 1), 10), now)).filter(Boolean).length;
    expect(moved).toBe(20);
  });

  it('never moves a record whose copy the broker would refuse: it is routed (and quarantined too_large) where it is', () => {
    const share = new MainLaneShare(1, config);
    // The share spent by a first record…
    expect(share.diverts(record('bulk', 1_000, 100), 1_000)).toBe(false);
    // …a record of 3 MB (a GZIP batch's, 300 KB on the wire) would be copied uncompressed: not moved.
    expect(share.diverts(record('bulk', 1_000, 3_000_000), 1_000)).toBe(false);
    const atLimit = record('bulk', 1_000, MAX_DIVERTED_BYTES - 2);
    const pastLimit = { ...record('bulk', 1_000, MAX_DIVERTED_BYTES - 2), raw: { key: Buffer.from('key'), value: Buffer.alloc(MAX_DIVERTED_BYTES - 2), timestamp: '1000' } };
    expect(share.diverts(pastLimit, 1_000)).toBe(false);
    // What fits is moved as before.
    expect(share.diverts({ ...atLimit, raw: { ...atLimit.raw, key: Buffer.from('k') } }, 1_000)).toBe(true);
    expect(share.diverts(record('bulk', 1_000, 100), 1_000)).toBe(true);
  });

  it('takes back what the records of a failed transaction took, so that judged again they are not moved for their own units', () => {
    const share = new MainLaneShare(100, config);
    const first = [record('bulk', 4_000, 100), record('bulk', 4_000, 100)];
    for (const judged of first) share.diverts(judged, 4_000);
    // 'bulk' has one destination: each takes one unit; fill the share to 99 more with 98 others.
    const others = Array.from({ length: 98 }, () => record('bulk', 4_000, 100));
    for (const judged of others) expect(share.diverts(judged, 4_000)).toBe(false);
    // The transaction holding `first` aborts: read again, they must be routed here again.
    share.giveBack(first);
    share.giveBack(first);
    expect(first.map((judged) => share.diverts(judged, 4_000))).toEqual([false, false]);
    expect(share.diverts(record('bulk', 4_000, 100), 4_000)).toBe(true);
  });
});
