export class PollTimeoutError extends Error {
  override readonly name = 'PollTimeoutError';
}

export class PollAbortedError extends Error {
  override readonly name = 'PollAbortedError';
}

export interface PollOptions {
  timeoutMs: number;
  intervalMs: number;
  /** Checked before every attempt; a reason string stops polling early (e.g. "process exited"). */
  abortReason?: () => string | undefined;
  /** Injected for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `probe` until it yields a value, the deadline passes, or `abortReason` reports why
 * waiting longer is pointless. A throwing probe counts as "not yet": during start-up every
 * connection refused is expected.
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, opts: PollOptions): Promise<T> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? realSleep;
  const deadline = now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const reason = opts.abortReason?.();
    if (reason !== undefined) throw new PollAbortedError(reason);
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (now() >= deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new PollTimeoutError(`not ready after ${Math.round(opts.timeoutMs / 1000)} s${detail}`);
    }
    await sleep(Math.min(opts.intervalMs, Math.max(0, deadline - now())));
  }
}
