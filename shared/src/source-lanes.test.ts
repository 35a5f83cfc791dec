import { describe, expect, it } from 'vitest';
import { enabledDestinations } from './config-view.js';
import { BYTES_PER_UNIT, shareUnits, SourceLanes } from './source-lanes.js';

describe('SourceLanes', () => {
  it('sends a source to the main lane up to its rate, and what is past it to the overflow lane', () => {
    const lanes = new SourceLanes(100);
    const at = 1_000_000;
    expect(lanes.laneFor('busy', 60, at)).toBe('main');
    expect(lanes.laneFor('busy', 40, at)).toBe('main');
    expect(lanes.laneFor('busy', 1, at)).toBe('overflow');
    // Half a second later half the rate is back.
    expect(lanes.laneFor('busy', 50, at + 500)).toBe('main');
    expect(lanes.laneFor('busy', 1, at + 500)).toBe('overflow');
  });

  it('keeps each source to its own share: one source past its rate does not move another', () => {
    const lanes = new SourceLanes(100);
    for (let request = 0; request < 50; request++) lanes.laneFor('busy', 100, 1_000 + request);
    expect(lanes.laneFor('quiet', 1, 1_050)).toBe('main');
    expect(lanes.laneFor('busy', 10, 1_050)).toBe('overflow');
  });

  it('takes nothing from the bucket for a request it sends to the overflow lane', () => {
    const lanes = new SourceLanes(100);
    expect(lanes.laneFor('s', 10, 0)).toBe('main');
    expect(lanes.laneFor('s', 250, 0)).toBe('overflow');
    expect(lanes.laneFor('s', 90, 0)).toBe('main');
  });

  it('covers a request larger than a second of the rate when the bucket is full, and the debt is paid back before the next', () => {
    const lanes = new SourceLanes(100);
    expect(lanes.laneFor('s', 250, 0)).toBe('main');
    expect(lanes.laneFor('s', 1, 1_000)).toBe('overflow');
    expect(lanes.laneFor('s', 1, 1_600)).toBe('main');
    // Sent every few seconds, such a request always goes the main way.
    expect(lanes.laneFor('quiet', 250, 0)).toBe('main');
    expect(lanes.laneFor('quiet', 250, 5_000)).toBe('main');
  });

  it('takes back what a request it sent to the main lane gave back, up to one second of the rate', () => {
    const lanes = new SourceLanes(100);
    expect(lanes.laneFor('s', 80, 0)).toBe('main');
    lanes.giveBack('s', 80);
    expect(lanes.laneFor('s', 100, 0)).toBe('main');
    lanes.giveBack('s', 500);
    expect(lanes.laneFor('s', 100, 0)).toBe('main');
    expect(lanes.laneFor('s', 1, 0)).toBe('overflow');
    lanes.giveBack('unknown', 10);
  });

  it('saves at most one second of the rate for later', () => {
    const lanes = new SourceLanes(100);
    lanes.laneFor('s', 1, 0);
    expect(lanes.laneFor('s', 100, 60_000)).toBe('main');
    expect(lanes.laneFor('s', 1, 60_000)).toBe('overflow');
  });

  it('with rate 0, sends everything to the main lane', () => {
    const lanes = new SourceLanes(0);
    for (let request = 0; request < 10; request++) expect(lanes.laneFor('s', 10_000, 0)).toBe('main');
  });
});

describe('shareUnits', () => {
  it('counts a typical request by its messages, once per destination', () => {
    // 100 events of ~1 KB: the bytes are fewer units than the messages.
    expect(shareUnits(100, 100_000, 1)).toBe(100);
    expect(shareUnits(100, 100_000, 3)).toBe(300);
  });

  it('counts a request of large messages by its bytes, 4 KiB a unit, times its destinations', () => {
    // The report's source: 15 messages of 30 KB to ten destinations.
    expect(shareUnits(15, 15 * 30_000, 10)).toBe(Math.ceil((15 * 30_000) / BYTES_PER_UNIT) * 10);
    expect(shareUnits(1, 4_097, 1)).toBe(2);
  });

  it('gives a source without enabled destinations the share of one', () => {
    expect(shareUnits(10, 1_000, 0)).toBe(10);
    expect(enabledDestinations([{ enabled: false }, { enabled: true }, { enabled: true }])).toBe(2);
  });

  it('sends a source that amplifies to the overflow lane at a message rate far under INGEST_SOURCE_RATE', () => {
    const lanes = new SourceLanes(500);
    const bigRequest = shareUnits(15, 15 * 30_000, 10);
    // Its first request, from a full bucket; then one every 2.2 s (its share), the rest overflow.
    expect(lanes.laneFor('amplifying', bigRequest, 0)).toBe('main');
    for (let at = 100; at < 2_200; at += 100) expect(lanes.laneFor('amplifying', bigRequest, at)).toBe('overflow');
    expect(lanes.laneFor('amplifying', bigRequest, 2_200)).toBe('main');
    // The same messages to one destination fit, once.
    expect(lanes.laneFor('single', shareUnits(15, 15 * 30_000, 1), 0)).toBe('main');
    expect(lanes.laneFor('single', shareUnits(15, 15 * 30_000, 1), 0)).toBe('main');
    expect(lanes.laneFor('single', shareUnits(15, 15 * 30_000, 1), 0)).toBe('main');
    expect(lanes.laneFor('single', shareUnits(15, 15 * 30_000, 1), 0)).toBe('main');
    expect(lanes.laneFor('single', shareUnits(15, 15 * 30_000, 1), 0)).toBe('overflow');
  });

  it('counts time once when the clock steps back (the wall clock set back)', () => {
    const lanes = new SourceLanes(100);
    for (let i = 0; i < 100; i++) expect(lanes.laneFor('s', 1, 1_000)).toBe('main');
    expect(lanes.laneFor('s', 1, 1_000)).toBe('overflow');
    // An earlier timestamp refills nothing, and does not move the clock back…
    expect(lanes.laneFor('s', 1, 500)).toBe('overflow');
    // …so 100 ms after the latest one refills 10, not 60.
    for (let i = 0; i < 10; i++) expect(lanes.laneFor('s', 1, 1_100)).toBe('main');
    expect(lanes.laneFor('s', 1, 1_100)).toBe('overflow');
  });
});
