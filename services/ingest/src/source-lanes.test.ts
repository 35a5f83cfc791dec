import { describe, expect, it } from 'vitest';
import { SourceLanes } from './source-lanes.js';

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
    expect(lanes.laneFor('s', 250, 0)).toBe('overflow');
    expect(lanes.laneFor('s', 100, 0)).toBe('main');
  });

  it('takes back what a request it sent to the main lane gave back, up to one second of the rate', () => {
    const lanes = new SourceLanes(100);
    expect(lanes.laneFor('s', 80, 0)).toBe('main');
    lanes.giveBack('s', 80);
    expect(lanes.laneFor('s', 100, 0)).toBe('main');
    lanes.giveBack('s', 500);
    expect(lanes.laneFor('s', 101, 0)).toBe('overflow');
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
