/**
 * Waiting for the services after they were spawned. A service may crash and be restarted
 * (restart-policy.ts) while we wait, so each is waited for through whichever child currently
 * runs it, until that one answers ready or the deadline passes: the banner must not say
 * "running" because the first child died and nobody looked at its successor.
 */
import { pollUntil } from './poll.js';

export interface WaitForServicesOptions<N extends string> {
  names: readonly N[];
  /** The child running the service now; `done` once it exited (a restart replaces it). */
  current: (name: N) => { done: boolean } | undefined;
  /** Whether the service answers ready (its readiness endpoint says 200). */
  isReady: (name: N) => Promise<boolean>;
  /** Set once the run is shutting down: waiting longer is pointless. */
  stopping: () => boolean;
  timeoutMs: number;
  intervalMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The services that were not ready by the deadline. */
export async function waitForServices<N extends string>(opts: WaitForServicesOptions<N>): Promise<N[]> {
  const notReady: N[] = [];
  await Promise.all(
    opts.names.map(async (name) => {
      try {
        await pollUntil(
          async () => {
            const child = opts.current(name);
            // Between a crash and its restart, whatever answers on the port is not this service.
            if (!child || child.done) return undefined;
            return (await opts.isReady(name)) ? true : undefined;
          },
          {
            timeoutMs: opts.timeoutMs,
            intervalMs: opts.intervalMs,
            abortReason: () => (opts.stopping() ? 'shutting down' : undefined),
            now: opts.now,
            sleep: opts.sleep,
          },
        );
      } catch {
        notReady.push(name);
      }
    }),
  );
  return opts.names.filter((name) => notReady.includes(name));
}
