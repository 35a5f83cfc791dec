/**
 * Waiting out an outage at start-up: a service that starts while Kafka or the registry is
 * away keeps trying (unready, its /healthz answering) instead of exiting, as it would ride
 * out the same outage later. Shutdown (the signal) ends the wait.
 */
import type { Logger } from './logger.js';

export interface PatienceOptions {
  logger: Logger;
  /** What is being done, for the log: "creating topics". */
  doing: string;
  signal?: AbortSignal | undefined;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export class GaveUp extends Error {
  constructor(doing: string) {
    super(`${doing}: stopped waiting (shutting down)`);
    this.name = 'GaveUp';
  }
}

/** Runs `attempt` until it succeeds, backing off between failures (logged); throws GaveUp once `signal` aborts. */
export async function untilSuccess<T>(attempt: () => Promise<T>, options: PatienceOptions): Promise<T> {
  const { logger, doing, signal, initialDelayMs = 500, maxDelayMs = 15_000 } = options;
  for (let failures = 0; ; failures++) {
    if (signal?.aborted) throw new GaveUp(doing);
    try {
      const result = await attempt();
      if (failures > 0) logger.info({ doing, failures }, 'succeeded after waiting for the broker or registry');
      return result;
    } catch (error) {
      const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(failures, 10));
      logger.warn({ err: error, doing, retryInMs: delay, failures: failures + 1 }, `${doing} failed; trying again`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  }
}
