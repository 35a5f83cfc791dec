/**
 * Whose request ingest works on next, when several are waiting: the sources take turns.
 *
 * A request's parse, validation, normalisation and Avro encoding run on the one main thread,
 * and Node runs them in the order the bodies finished arriving. A source posting 476 KB batches
 * 64 at a time (each about 14 ms of that work) then put every other source's requests behind
 * dozens of its own. With the transactions' queue (produce-batcher.ts) it was one of two
 * queues in arrival order: a one-event request from another source was answered at p50
 * 0.8–1.3 s, up to 4.3 s, while nothing was wrong with Kafka or with that source; with both
 * taking turns (and 1 MB transactions), at p50 112–177 ms (ingest-flood.it.test.ts).
 *
 * So that work is queued per key (the source) and run round-robin: one request of each source
 * waiting, in the order they started waiting, a source just served going to the back. The
 * queue is worked through once the I/O callbacks of the loop turn have run (`setImmediate`), so
 * requests that arrived together are ordered by source, not by arrival, and for up to
 * `budgetMs` per turn before the next turn's I/O is let in — another source's request that
 * arrives meanwhile waits for at most one request of each other source, not for all of them.
 * Within a source, requests keep their order. Unloaded, a request waits one loop turn.
 *
 * Pure apart from the scheduler and clock it is given.
 */
import { PartyTurns } from '@tributary/shared';

export interface FairTurnsOptions {
  /** Work done per loop turn before letting I/O in again (at least one request is always done). */
  budgetMs: number;
  schedule?: (run: () => void) => void;
  now?: () => number;
}

export class FairTurns {
  private readonly jobs = new PartyTurns<() => void>();
  private scheduled = false;
  private readonly schedule: (run: () => void) => void;
  private readonly now: () => number;

  constructor(private readonly options: FairTurnsOptions) {
    this.schedule = options.schedule ?? setImmediate;
    this.now = options.now ?? (() => performance.now());
  }

  /** Runs `work` in `key`'s turn; its result (or what it throws) settles the promise. */
  run<T>(key: string, work: () => T): Promise<Awaited<T>> {
    return new Promise<Awaited<T>>((resolve, reject) => {
      const job = () => {
        try {
          resolve(work() as Awaited<T>);
        } catch (error) {
          reject(error as Error);
        }
      };
      this.jobs.push(key, job);
      if (!this.scheduled) {
        this.scheduled = true;
        this.schedule(() => this.work());
      }
    });
  }

  /** Requests waiting for their turn. */
  get waiting(): number {
    return this.jobs.size;
  }

  private work(): void {
    this.scheduled = false;
    const started = this.now();
    for (let job = this.jobs.take(); job !== undefined; job = this.jobs.take()) {
      job();
      if (this.jobs.size > 0 && this.now() - started >= this.options.budgetMs) {
        this.scheduled = true;
        this.schedule(() => this.work());
        return;
      }
    }
  }
}
