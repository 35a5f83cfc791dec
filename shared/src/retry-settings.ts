/**
 * The retry ladder's settings, one definition for every service that needs them: the
 * dispatcher and the router write to the tier topics of their ladder, the retry scheduler
 * reads the tier topics of its own — so all three must be given the same values (the Helm
 * chart and `npm start` give every service the same environment).
 */
import { envTypes } from './env.js';
import { formatDuration } from './duration.js';
import { DEFAULT_LADDER, validateLadder, type RetryLadder } from './retry-ladder.js';

export const retryLadderEnv = {
  /** Delay after each failed attempt; the last repeats. One tier topic per distinct delay. */
  RETRY_LADDER: envTypes.durationList(DEFAULT_LADDER.delaysMs.map(formatDuration).join(',')),
  /** No attempt later than this after the first one; later retries become `expired` dead letters. */
  RETRY_WINDOW: envTypes.duration(formatDuration(DEFAULT_LADDER.windowMs)),
};

export function ladderFromSettings(settings: { RETRY_LADDER: number[]; RETRY_WINDOW: number }): RetryLadder {
  return validateLadder({ delaysMs: settings.RETRY_LADDER, windowMs: settings.RETRY_WINDOW });
}
