/**
 * Read-your-writes for config, for a process that follows the config topic on its own and
 * decides about records another process acted on: the dispatcher before it dead-letters a
 * delivery for its destination (the router produced it only after it saw the destination, but
 * this view may not have applied the same record yet), the indexer before it writes a
 * message's routing (the router routed it with config this view may not hold yet). Before
 * deciding, the process waits until its view has applied everything the config topic held
 * when the check started. Checks
 * are shared: a check that started after a delivery was read covers that delivery, and at
 * most one runs at a time, so a backlog for a deleted destination costs a few checks.
 *
 * A check that gave up (the config reader or the broker away for longer than `timeoutMs`) is
 * waited for once: until a check succeeds again, callers decide with the view as it stands
 * while checks go on in the background. Otherwise every decision would wait out its own
 * timeout — the router, which checks before each transaction, one transaction per timeout
 * for as long as its config reader took to rejoin after a broker restart.
 */
import type { ConfigView } from './config-view.js';
import type { Logger } from './logger.js';

interface Check {
  startedAt: number;
  done: Promise<void>;
}

export class ConfigFreshness {
  private current: Check | undefined;
  private queued: Promise<void> | undefined;
  /** The last check gave up: callers no longer wait for the next one. */
  private failing = false;

  constructor(
    private readonly options: { view: ConfigView; logger: Logger; timeoutMs: number },
  ) {}

  /** Resolves once the view holds every config record written before `since` (or the check gave up). */
  caughtUpSince(since: number): Promise<void> {
    if (this.current && this.current.startedAt >= since) return this.failing ? Promise.resolve() : this.current.done;
    if (!this.queued) {
      const previous = this.current?.done ?? Promise.resolve();
      this.queued = previous.then(() => {
        this.queued = undefined;
        const check: Check = { startedAt: Date.now(), done: this.check() };
        this.current = check;
        return check.done;
      });
    }
    return this.failing ? Promise.resolve() : this.queued;
  }

  private async check(): Promise<void> {
    const { view, logger, timeoutMs } = this.options;
    try {
      await view.reader.catchUpToEnd(timeoutMs);
      if (this.failing) logger.info('the config view is confirmed current again');
      this.failing = false;
    } catch (error) {
      // Decide with the config as it stands rather than hold deliveries indefinitely.
      if (!this.failing) logger.warn({ err: error }, 'could not confirm the config view is current; deciding with it as it stands until a check succeeds');
      this.failing = true;
    }
  }
}
