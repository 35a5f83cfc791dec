/**
 * Replaying dead letters is a write that sends deliveries again, so the console asks twice:
 * a dry run first says how many would go, and only its confirmation sends them. This is the
 * little state machine behind that panel.
 */
import type { ReplayRequest, ReplayResult } from './api';

export type ReplayState =
  | { step: 'idle' }
  | { step: 'checking'; request: ReplayRequest }
  | { step: 'confirm'; request: ReplayRequest; preview: ReplayResult }
  | { step: 'replaying'; request: ReplayRequest; preview: ReplayResult }
  | { step: 'done'; result: ReplayResult }
  | { step: 'failed'; message: string };

export type ReplayEvent =
  | { type: 'check'; request: Omit<ReplayRequest, 'dryRun'> }
  | { type: 'previewed'; preview: ReplayResult }
  | { type: 'confirm' }
  | { type: 'replayed'; result: ReplayResult }
  | { type: 'failed'; message: string }
  | { type: 'reset' };

export const IDLE: ReplayState = { step: 'idle' };

export function replayStep(state: ReplayState, event: ReplayEvent): ReplayState {
  switch (event.type) {
    case 'check':
      return { step: 'checking', request: { ...event.request, dryRun: true } };
    case 'previewed':
      if (state.step !== 'checking') return state;
      return { step: 'confirm', request: { ...state.request, dryRun: false }, preview: event.preview };
    case 'confirm':
      if (state.step !== 'confirm' || state.preview.replayed === 0) return state;
      return { step: 'replaying', request: state.request, preview: state.preview };
    case 'replayed':
      return state.step === 'replaying' ? { step: 'done', result: event.result } : state;
    case 'failed':
      return state.step === 'checking' || state.step === 'replaying' ? { step: 'failed', message: event.message } : state;
    case 'reset':
      return IDLE;
  }
}

/** The request the panel must send now, if any: the dry run, then the real replay. */
export function pendingRequest(state: ReplayState): ReplayRequest | undefined {
  return state.step === 'checking' || state.step === 'replaying' ? state.request : undefined;
}

export function describeReplay(result: ReplayResult): string {
  const letters = (count: number) => `${count} dead letter${count === 1 ? '' : 's'}`;
  const skipped = result.skipped > 0 ? ` (${letters(result.skipped)} already replayed, skipped)` : '';
  if (result.dryRun) {
    if (result.matched === 0) return `No dead letters of ${result.destination} match.`;
    return `${letters(result.replayed)} of ${result.destination} would be replayed${skipped}.`;
  }
  return `Replayed ${letters(result.replayed)} of ${result.destination}${skipped}.`;
}
