import { describe, expect, it } from 'vitest';
import { describeReplay, IDLE, pendingRequest, replayStep, type ReplayState } from './replay';

const preview = { destination: 'crm', matched: 3, replayed: 2, skipped: 1, dryRun: true };

describe('replayStep', () => {
  it('dry-runs first, then replays only once confirmed', () => {
    let state: ReplayState = replayStep(IDLE, { type: 'check', request: { destination: 'crm', reason: 'expired' } });
    expect(pendingRequest(state)).toEqual({ destination: 'crm', reason: 'expired', dryRun: true });
    state = replayStep(state, { type: 'previewed', preview });
    expect(state.step).toBe('confirm');
    expect(pendingRequest(state)).toBeUndefined();
    state = replayStep(state, { type: 'confirm' });
    expect(pendingRequest(state)).toEqual({ destination: 'crm', reason: 'expired', dryRun: false });
    state = replayStep(state, { type: 'replayed', result: { ...preview, dryRun: false } });
    expect(state).toEqual({ step: 'done', result: { ...preview, dryRun: false } });
  });

  it('has nothing to confirm when nothing would be replayed', () => {
    const checking = replayStep(IDLE, { type: 'check', request: { destination: 'crm' } });
    const confirm = replayStep(checking, { type: 'previewed', preview: { ...preview, replayed: 0, skipped: 3 } });
    expect(replayStep(confirm, { type: 'confirm' })).toBe(confirm);
  });

  it('ignores answers that arrive out of turn, and reports failures of a request in flight', () => {
    expect(replayStep(IDLE, { type: 'previewed', preview })).toBe(IDLE);
    expect(replayStep(IDLE, { type: 'failed', message: 'x' })).toBe(IDLE);
    const checking = replayStep(IDLE, { type: 'check', request: { destination: 'crm' } });
    expect(replayStep(checking, { type: 'failed', message: 'destination "crm" is disabled' })).toEqual({ step: 'failed', message: 'destination "crm" is disabled' });
    expect(replayStep(checking, { type: 'reset' })).toBe(IDLE);
  });
});

describe('describeReplay', () => {
  it('says what would happen and what happened', () => {
    expect(describeReplay(preview)).toBe('2 dead letters of crm would be replayed (1 dead letter already replayed, skipped).');
    expect(describeReplay({ ...preview, matched: 0, replayed: 0, skipped: 0 })).toBe('No dead letters of crm match.');
    expect(describeReplay({ ...preview, replayed: 1, skipped: 0, dryRun: false })).toBe('Replayed 1 dead letter of crm.');
  });
});
