/**
 * What `npm start` does when a service, or the Kafka or registry JVM, exits on its own — as
 * Kubernetes would with `restartPolicy: Always`: start it again after a back-off that doubles
 * with each crash in a row (1 s, 2 s, 4 s … up to a minute) and resets once it has run for a
 * while. The exception is a service's exit code 2, which every service uses for invalid
 * settings (the environment or the TRIBUTARY_CONFIG file): restarting cannot fix those, so the
 * run stops and says so. Pure.
 */
export const INVALID_SETTINGS_EXIT_CODE = 2;
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 60_000;
/** A process that ran this long before exiting starts its back-off afresh. */
const STABLE_AFTER_MS = 60_000;

export interface CrashBackoff {
  delayMs: number;
  crashesInARow: number;
}

export type RestartDecision = ({ kind: 'restart' } & CrashBackoff) | { kind: 'stop'; reason: string };

/** The wait before restarting a process that crashed after running `ranForMs`. */
export function crashBackoff(ranForMs: number, crashesInARowBefore: number): CrashBackoff {
  const crashesInARow = ranForMs >= STABLE_AFTER_MS ? 1 : crashesInARowBefore + 1;
  return { delayMs: Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (crashesInARow - 1)), crashesInARow };
}

/** For a service: restart with back-off, unless its exit code says its settings are invalid. */
export function afterExit(code: number | null, ranForMs: number, crashesInARowBefore: number): RestartDecision {
  if (code === INVALID_SETTINGS_EXIT_CODE) {
    return { kind: 'stop', reason: 'its settings or its TRIBUTARY_CONFIG file are invalid (exit code 2): fix them and start again' };
  }
  return { kind: 'restart', ...crashBackoff(ranForMs, crashesInARowBefore) };
}
