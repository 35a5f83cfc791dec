/**
 * Items waiting per party, taken one party at a time in rotation: the party at the front gives
 * its oldest item and goes to the back if it has more. Each party's items keep their order.
 * What ingest's request turns (services/ingest/src/fair-turns.ts) and the group commit's
 * transactions (produce-batcher.ts) both wait in, so that one party's long queue never stands
 * in front of another's first item. Pure.
 */
export class PartyTurns<T> {
  /** A Map keeps insertion order: the front is the party served next, a served one is re-inserted at the back. */
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(party: string, item: T): void {
    const queue = this.queues.get(party);
    if (queue) queue.push(item);
    else this.queues.set(party, [item]);
    this.count++;
  }

  /** The item `take` would give next. */
  peek(): T | undefined {
    const first = this.queues.values().next();
    return first.done ? undefined : first.value[0];
  }

  /** The front party's oldest item; that party moves to the back. */
  take(): T | undefined {
    const first = this.queues.entries().next();
    if (first.done) return undefined;
    const [party, queue] = first.value;
    const item = queue.shift();
    this.queues.delete(party);
    if (queue.length > 0) this.queues.set(party, queue);
    this.count--;
    return item;
  }

  /** Withdraws `item` from `party`'s queue; false when it is not waiting there. */
  remove(party: string, item: T): boolean {
    const queue = this.queues.get(party);
    const index = queue ? queue.indexOf(item) : -1;
    if (!queue || index < 0) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(party);
    this.count--;
    return true;
  }
}
