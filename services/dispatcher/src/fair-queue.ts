/**
 * Which delivery is attempted next. Pure; the dispatcher drives it.
 *
 * Each destination has its own queue per lane (first attempts and due retries) and at most
 * `maxInFlightPerDestination` attempts running; at most `maxInFlight` run over all
 * destinations. Destinations with work take turns (round robin), and within a destination
 * the two lanes take turns, so a destination with a deep backlog gets one start per round
 * like any other — it cannot starve small ones — and a flood of due retries gets every
 * other start of its own destination, never the starts of the others. Sizes are kept in
 * bytes as well as counts so the dispatcher can bound what it holds in memory.
 *
 * Stalled destinations (attempts out, none finished for `stalledAfterMs`: a receiver hanging
 * until the timeout) do not hold the global limit. Hanging receivers take their slots the
 * moment their deliveries are read, before anything can tell they hang; a few of them took all
 * `maxInFlight` between them, and every other destination waited for their timeouts. Once
 * stalled, their attempts stop counting against `maxInFlight`, and they start no more while
 * the limit is reached; the others may then run up to `maxInFlight` besides — at most
 * `2 × maxInFlight` attempts in all, so sockets stay bounded however many receivers hang.
 */
import type { DeliveryLane } from '@tributary/schemas';

export interface FairQueueLimits {
  maxInFlight: number;
  maxInFlightPerDestination: number;
  /** A destination whose attempts have made no progress this long is stalled (absent: never). */
  stalledAfterMs?: number;
}

/** Running attempts, stalled ones included, never exceed this many times `maxInFlight`. */
export const STALLED_HEADROOM = 2;

export interface Queued {
  lane: DeliveryLane;
  /** Bytes this item holds in memory (the record's size). */
  bytes: number;
  /** When it was queued (epoch ms). */
  queuedAt: number;
}

export interface Started<T> {
  destinationId: string;
  item: T;
}

/** A FIFO that does not copy on removal from the front. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head] = undefined as T;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const all = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return all;
  }

  /** Keeps the items for which `keep` holds, in order; returns the others. */
  filter(keep: (item: T) => boolean): T[] {
    const kept: T[] = [];
    const removed: T[] = [];
    for (let index = this.head; index < this.items.length; index++) {
      const item = this.items[index]!;
      (keep(item) ? kept : removed).push(item);
    }
    this.items = kept;
    this.head = 0;
    return removed;
  }
}

interface DestinationQueues<T extends Queued> {
  first: Fifo<T>;
  retry: Fifo<T>;
  bytes: number;
  running: number;
  /** When its attempts last made progress: one finished, or the first started after none ran. */
  progressAt: number;
  /** The lane this destination starts from on its next turn. */
  nextLane: DeliveryLane;
  /** Whether it is in the turn order now. */
  ready: boolean;
}

export class FairQueue<T extends Queued> {
  private readonly destinations = new Map<string, DestinationQueues<T>>();
  /** Destinations with queued work and a free slot of their own, in turn order. */
  private readonly turns = new Fifo<string>();
  private runningTotal = 0;
  private roomWanted = false;
  private readonly queuedByLane = { first: 0, retry: 0 };
  private queuedBytesTotal = 0;

  constructor(private readonly limits: FairQueueLimits) {}

  get inFlight(): number {
    return this.runningTotal;
  }

  get queued(): number {
    return this.queuedByLane.first + this.queuedByLane.retry;
  }

  get queuedBytes(): number {
    return this.queuedBytesTotal;
  }

  queuedIn(lane: DeliveryLane): number {
    return this.queuedByLane[lane];
  }

  /**
   * Queued items and bytes, running attempts, since when the oldest queued item waits, and —
   * while attempts run — since when none of them has finished, of one destination.
   */
  backlog(destinationId: string): { first: number; retry: number; bytes: number; running: number; oldestQueuedAt: number | undefined; progressAt: number | undefined } {
    const state = this.destinations.get(destinationId);
    if (!state) return { first: 0, retry: 0, bytes: 0, running: 0, oldestQueuedAt: undefined, progressAt: undefined };
    const first = state.first.peek()?.queuedAt;
    const retry = state.retry.peek()?.queuedAt;
    const oldestQueuedAt = first === undefined ? retry : retry === undefined ? first : Math.min(first, retry);
    return { first: state.first.size, retry: state.retry.size, bytes: state.bytes, running: state.running, oldestQueuedAt, progressAt: state.running > 0 ? state.progressAt : undefined };
  }

  /** Destinations with anything queued or running. */
  activeDestinations(): IterableIterator<string> {
    return this.destinations.keys();
  }

  enqueue(destinationId: string, item: T): void {
    const state = this.state(destinationId);
    state[item.lane].push(item);
    state.bytes += item.bytes;
    this.queuedByLane[item.lane]++;
    this.queuedBytesTotal += item.bytes;
    this.markReady(destinationId, state);
  }

  /**
   * Starts every item that may start now, destinations and lanes taking turns. Whether it
   * stopped for want of a free slot with items still queued is `waitingForRoom` afterwards.
   */
  startRunnable(now = Date.now()): Array<Started<T>> {
    const started: Array<Started<T>> = [];
    const { maxInFlight } = this.limits;
    // Counted only once the limit is reached, which is rare: it looks at every destination.
    let stalledRunning: number | undefined;
    this.roomWanted = false;
    for (;;) {
      if (this.runningTotal >= maxInFlight) {
        stalledRunning ??= this.stalledRunning(now);
        if (this.runningTotal - stalledRunning >= maxInFlight || this.runningTotal >= maxInFlight * STALLED_HEADROOM) {
          this.roomWanted = this.turns.size > 0;
          break;
        }
      }
      const destinationId = this.turns.shift();
      if (destinationId === undefined) break;
      const state = this.destinations.get(destinationId);
      if (!state) continue;
      state.ready = false;
      // Past the limit only on the room stalled attempts leave, which is not theirs to take;
      // back in turn when one of theirs finishes.
      if (this.runningTotal >= maxInFlight && this.isStalled(state, now)) continue;
      const item = this.takeNext(state);
      if (!item) {
        this.forgetIfIdle(destinationId, state);
        continue;
      }
      if (state.running === 0) state.progressAt = now;
      state.running++;
      this.runningTotal++;
      started.push({ destinationId, item });
      this.markReady(destinationId, state);
    }
    return started;
  }

  /**
   * Whether the last `startRunnable` left deliveries queued for want of a slot. Time alone can
   * free one (a destination stalling), so the caller looks again later.
   */
  get waitingForRoom(): boolean {
    return this.roomWanted;
  }

  private isStalled(state: DestinationQueues<T>, now: number): boolean {
    const { stalledAfterMs } = this.limits;
    return stalledAfterMs !== undefined && state.running > 0 && now - state.progressAt > stalledAfterMs;
  }

  private stalledRunning(now: number): number {
    let total = 0;
    for (const state of this.destinations.values()) if (this.isStalled(state, now)) total += state.running;
    return total;
  }

  /** Ends a started attempt and frees its slots. */
  finish(destinationId: string, now = Date.now()): void {
    const state = this.destinations.get(destinationId);
    if (!state || state.running === 0) return;
    state.running--;
    state.progressAt = now;
    this.runningTotal--;
    this.markReady(destinationId, state);
    this.forgetIfIdle(destinationId, state);
  }

  /**
   * Removes the queued items of one destination — every one (its circuit opened: they are
   * deferred), or those `take` picks.
   */
  takeQueued(destinationId: string, take?: (item: T) => boolean): T[] {
    const state = this.destinations.get(destinationId);
    if (!state) return [];
    const taken = take ? [...state.first.filter((item) => !take(item)), ...state.retry.filter((item) => !take(item))] : [...state.first.drain(), ...state.retry.drain()];
    this.forgetQueued(taken);
    for (const item of taken) state.bytes -= item.bytes;
    this.forgetIfIdle(destinationId, state);
    return taken;
  }

  /** Removes queued (not started) items matching `drop`, e.g. those of a revoked partition. */
  removeQueued(drop: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (const [destinationId, state] of this.destinations) {
      for (const lane of ['first', 'retry'] as const) {
        for (const item of state[lane].filter((candidate) => !drop(candidate))) {
          state.bytes -= item.bytes;
          removed.push(item);
        }
      }
      this.forgetIfIdle(destinationId, state);
    }
    this.forgetQueued(removed);
    return removed;
  }

  private takeNext(state: DestinationQueues<T>): T | undefined {
    const other: DeliveryLane = state.nextLane === 'first' ? 'retry' : 'first';
    const lane = state[state.nextLane].size > 0 ? state.nextLane : other;
    const item = state[lane].shift();
    if (!item) return undefined;
    state.nextLane = lane === 'first' ? 'retry' : 'first';
    state.bytes -= item.bytes;
    this.queuedByLane[lane]--;
    this.queuedBytesTotal -= item.bytes;
    return item;
  }

  private forgetQueued(items: T[]): void {
    for (const item of items) {
      this.queuedByLane[item.lane]--;
      this.queuedBytesTotal -= item.bytes;
    }
  }

  private state(destinationId: string): DestinationQueues<T> {
    let state = this.destinations.get(destinationId);
    if (!state) {
      state = { first: new Fifo(), retry: new Fifo(), bytes: 0, running: 0, progressAt: 0, nextLane: 'first', ready: false };
      this.destinations.set(destinationId, state);
    }
    return state;
  }

  private markReady(destinationId: string, state: DestinationQueues<T>): void {
    const queued = state.first.size + state.retry.size;
    if (!state.ready && queued > 0 && state.running < this.limits.maxInFlightPerDestination) {
      state.ready = true;
      this.turns.push(destinationId);
    }
  }

  /**
   * Drops an idle destination's state — unless it still has a place in the turn order
   * (its queue was emptied by a removal): `startRunnable` drops it when that turn comes,
   * so a destination never holds two places.
   */
  private forgetIfIdle(destinationId: string, state: DestinationQueues<T>): void {
    if (!state.ready && state.running === 0 && state.first.size === 0 && state.retry.size === 0) this.destinations.delete(destinationId);
  }
}
