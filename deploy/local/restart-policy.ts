/**
 * What `npm start` does when a service exits on its own — as Kubernetes would with
 * `restartPolicy: Always`: start it again after a back-off that doubles with each crash in
 * a row (1 s, 2 s, 4 s … up to a minute) and resets once the service has run for a while.
 * The exception is exit code 2, which every service uses for invalid settings: restarting
 * cannot fix those, so the run stops and says so. Pure.
 */
export const INVALID_SETTINGS_EXIT_CODE = 2;
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 60_000;
/** A service that ran this long before exiting starts its back-off afresh. */
const STABLE_AFTER_MS = 60_000;

export type RestartDecision = { kind: 'restart'; delayMs: number; crashesInARow: number } | { kind: 'stop'; reason: string };

export function afterExit(code: number | null, ranForMs: number, crashesInARowBefore: number): RestartDecision {
  if (code === INVALID_SETTINGS_EXIT_CODE) return { kind: 'stop', reason: 'its settings are invalid (exit code 2): fix them and start again' };
  const crashesInARow = ranForMs >= STABLE_AFTER_MS ? 1 : crashesInARowBefore + 1;
  return { kind: 'restart', delayMs: Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (crashesInARow - 1)), crashesInARow };
}
