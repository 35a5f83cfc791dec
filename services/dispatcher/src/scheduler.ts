/**
 * Which delivery is attempted next, so that a slow or dead endpoint cannot hold back
 * healthy ones. Pure (time is passed in); the dispatcher drives it.
 *
 * - Each destination has a FIFO queue and at most `maxInFlightPerDestination` attempts
 *   running; at most `maxInFlight` run over all destinations. Destinations with work take
 *   turns (round robin), so one with a deep queue does not starve the others.
 * - Deliveries are never held back for one destination: fetching waits only for the
 *   global buffer (the dispatcher's concern). A destination is judged when its queue
 *   reaches `maxQueuedPerDestination`: if it is stalled — it has finished nothing for
 *   `stalledAfterMs` while requests are running (it hangs), or its requests take longer
 *   than that on average (a moving average, so the second wave of a hanging destination is
 *   judged at once) — its new deliveries are deferred (put back on the first retry tier)
 *   and its queue is trimmed back to the bound, so it holds a bounded share of the buffer
 *   and never the partition. A busy destination that keeps finishing requests may queue
 *   more; the global buffer bounds it.
 */
export interface SchedulerLimits {
  maxInFlight: number;
  maxInFlightPerDestination: number;
  maxQueuedPerDestination: number;
  stalledAfterMs: number;
}

/** Weight of the newest request in a destination's moving average of request durations. */
const DURATION_SMOOTHING = 0.2;

export type Admission = 'queue' | 'defer';

export interface Started<T> {
  destinationId: string;
  item: T;
  ticket: number;
}

interface DestinationState<T> {
  queue: T[];
  /** Running attempts by ticket → start time; Map order is start order, so the first is the oldest. */
  running: Map<number, number>;
  /** Moving average of finished request durations; undefined before the first finishes. */
  averageMs: number | undefined;
  lastFinishedAt: number | undefined;
  ready: boolean;
}

export class DestinationScheduler<T> {
  private readonly destinations = new Map<string, DestinationState<T>>();
  /** Destinations with queued work and a free slot of their own, in turn order. */
  private readonly ready: string[] = [];
  private runningTotal = 0;
  private queuedTotal = 0;
  private nextTicket = 1;
  /** Quiet time is only counted from here: before it, this process itself could not hear answers. */
  private responsiveSince = Number.NEGATIVE_INFINITY;

  constructor(private readonly limits: SchedulerLimits) {}

  get inFlight(): number {
    return this.runningTotal;
  }

  get queued(): number {
    return this.queuedTotal;
  }

  queuedFor(destinationId: string): number {
    return this.destinations.get(destinationId)?.queue.length ?? 0;
  }

  runningFor(destinationId: string): number {
    return this.destinations.get(destinationId)?.running.size ?? 0;
  }

  /** Whether the destination is not keeping up: silent while busy, or slow on average. */
  isStalled(destinationId: string, now: number): boolean {
    const state = this.destinations.get(destinationId);
    if (!state) return false;
    if (state.averageMs !== undefined && state.averageMs > this.limits.stalledAfterMs) return true;
    const oldest = state.running.values().next();
    if (oldest.done) return false;
    const quietSince = Math.max(state.lastFinishedAt ?? oldest.value, oldest.value, this.responsiveSince);
    return now - quietSince > this.limits.stalledAfterMs;
  }

  /**
   * Records that this process's event loop was blocked until `at` (a GC pause, a burst of
   * work, a slow log pipe): answers that arrived meanwhile were not processed, so a
   * destination's silence before `at` says nothing about the destination.
   */
  noteUnresponsiveUntil(at: number): void {
    if (at > this.responsiveSince) this.responsiveSince = at;
  }

  admission(destinationId: string, now: number): Admission {
    if (this.queuedFor(destinationId) < this.limits.maxQueuedPerDestination) return 'queue';
    return this.isStalled(destinationId, now) ? 'defer' : 'queue';
  }

  /** Removes the newest queued items beyond the per-destination bound (to be deferred). */
  trimExcess(destinationId: string): T[] {
    const state = this.destinations.get(destinationId);
    if (!state || state.queue.length <= this.limits.maxQueuedPerDestination) return [];
    const excess = state.queue.splice(this.limits.maxQueuedPerDestination);
    this.queuedTotal -= excess.length;
    return excess;
  }

  enqueue(destinationId: string, item: T): void {
    const state = this.state(destinationId);
    state.queue.push(item);
    this.queuedTotal++;
    this.markReady(destinationId, state);
  }

  /** Starts every delivery that may start now, taking destinations in turn. */
  startRunnable(now: number): Array<Started<T>> {
    const started: Array<Started<T>> = [];
    while (this.runningTotal < this.limits.maxInFlight && this.ready.length > 0) {
      const destinationId = this.ready.shift()!;
      const state = this.destinations.get(destinationId)!;
      state.ready = false;
      const item = state.queue.shift()!;
      this.queuedTotal--;
      const ticket = this.nextTicket++;
      state.running.set(ticket, now);
      this.runningTotal++;
      started.push({ destinationId, item, ticket });
      this.markReady(destinationId, state);
    }
    return started;
  }

  /** Ends a started attempt and frees its slots. */
  finish(started: Pick<Started<T>, 'destinationId' | 'ticket'>, now: number): void {
    const state = this.destinations.get(started.destinationId);
    const startedAt = state?.running.get(started.ticket);
    if (!state || startedAt === undefined) return;
    state.running.delete(started.ticket);
    const duration = now - startedAt;
    state.lastFinishedAt = now;
    state.averageMs = state.averageMs === undefined ? duration : state.averageMs + DURATION_SMOOTHING * (duration - state.averageMs);
    this.runningTotal--;
    this.markReady(started.destinationId, state);
    if (state.queue.length === 0 && state.running.size === 0) this.destinations.delete(started.destinationId);
  }

  /** Removes queued (not started) items matching `drop`, e.g. those of a revoked partition. */
  removeQueued(drop: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (const [destinationId, state] of this.destinations) {
      const keep: T[] = [];
      for (const item of state.queue) (drop(item) ? removed : keep).push(item);
      state.queue = keep;
      if (keep.length === 0 && state.running.size === 0) {
        this.destinations.delete(destinationId);
        if (state.ready) this.ready.splice(this.ready.indexOf(destinationId), 1);
      } else if (keep.length === 0 && state.ready) {
        state.ready = false;
        this.ready.splice(this.ready.indexOf(destinationId), 1);
      }
    }
    this.queuedTotal -= removed.length;
    return removed;
  }

  private state(destinationId: string): DestinationState<T> {
    let state = this.destinations.get(destinationId);
    if (!state) {
      state = { queue: [], running: new Map(), averageMs: undefined, lastFinishedAt: undefined, ready: false };
      this.destinations.set(destinationId, state);
    }
    return state;
  }

  private markReady(destinationId: string, state: DestinationState<T>): void {
    if (!state.ready && state.queue.length > 0 && state.running.size < this.limits.maxInFlightPerDestination) {
      state.ready = true;
      this.ready.push(destinationId);
    }
  }
}
