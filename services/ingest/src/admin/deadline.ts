/**
 * A bound on how long an admin request waits for Kafka. Producers retry without limit
 * (an abandoned idempotent send could break ordering), so the write itself goes on; only
 * the caller stops waiting and is told the outcome is not known yet.
 */
import { AdminError } from './errors.js';

export function withDeadline<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AdminError(
            503,
            'kafka_unavailable',
            `${what} was not confirmed by Kafka within ${timeoutMs / 1000} s; it may still take effect, so read the state back before retrying`,
          ),
        ),
      timeoutMs,
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
