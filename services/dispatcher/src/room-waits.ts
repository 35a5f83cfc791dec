/**
 * Who waits for room in a lane, and when they are woken. Pure but for the timers.
 *
 * A lane's readers (one per partition kafkajs hands over at once, up to eight a lane) wait when
 * their lane's buffer is full. Deliveries settle by the thousand a second, and each frees some
 * room: waking every waiting reader on every settle had each of them check the lane, judge the
 * queued backlog again, heartbeat and arm a new timer, only to find the lane full again — 0.8 s of
 * the dispatcher's 15–22 s of CPU in a backfill (ANALYSIS.md, 29 November). So the wakes of one
 * turn of the event loop are gathered into one, and a lane's readers are woken only when their
 * lane has room, judged once for all of them; their own timeout still wakes them to heartbeat and
 * look again. Waiters for any change at all (shutdown's drain) are woken at every gathered wake.
 */
import type { DeliveryLane } from '@tributary/schemas';
import { LANES } from './lanes.js';

/** A lane, for its readers; 'any' for whoever waits for anything to settle. */
export type WaitFor = DeliveryLane | 'any';

const WAIT_KINDS: readonly WaitFor[] = ['any', ...LANES];

export class RoomWaits {
  private readonly waiting: Record<WaitFor, Set<() => void>> = { first: new Set(), retry: new Set(), any: new Set() };
  private wakeScheduled = false;

  /**
   * @param hasRoom whether a lane may read again: asked once per lane with waiters at each
   *   gathered wake (the dispatcher's may defer queued backlog to make room).
   */
  constructor(
    private readonly hasRoom: (lane: DeliveryLane) => boolean,
    private readonly nextTurn: (turn: () => void) => void = setImmediate,
  ) {}

  /** Resolves when `what` may have changed for the caller, or after `timeoutMs`. */
  wait(what: WaitFor, timeoutMs: number): Promise<void> {
    const waiters = this.waiting[what];
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      waiters.add(done);
    });
  }

  /** Room may have been made: wakes, at the end of this turn, the waiters it concerns. */
  changed(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    this.nextTurn(() => {
      this.wakeScheduled = false;
      this.wake(false);
    });
  }

  /** Every waiter looks again now, room or not (partitions were assigned or revoked). */
  wakeAll(): void {
    this.wake(true);
  }

  /** How many wait for `what`. */
  count(what: WaitFor): number {
    return this.waiting[what].size;
  }

  private wake(everyone: boolean): void {
    for (const what of WAIT_KINDS) {
      const waiters = this.waiting[what];
      if (waiters.size === 0) continue;
      if (!everyone && what !== 'any' && !this.hasRoom(what)) continue;
      // Copied: a waiter woken may wait again at once, and must not be woken twice by one wake.
      for (const done of [...waiters]) done();
    }
  }
}
