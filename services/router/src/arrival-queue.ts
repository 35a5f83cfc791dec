/**
 * Keys in the order they arrived, each with its arrival time: first in, first out, in
 * fixed-size chunks so that neither end ever copies the whole queue.
 *
 * Why not the insertion order of a `Map`: V8 leaves a deleted entry in place as a hole until
 * the table is next rebuilt, and an iterator started at the front walks every hole. Dropping
 * the oldest entry of a full two-million-entry map that way cost 34 µs a message at first and
 * 230 µs half a million messages later (measured with the router's DedupState), growing until
 * the table was rebuilt — a router at DEDUP_MAX_ENTRIES spent its core skipping holes.
 */

const CHUNK = 4096;

interface Chunk {
  keys: Array<string | undefined>;
  at: Float64Array;
  /** Slots written so far. */
  length: number;
}

export class ArrivalQueue {
  private readonly chunks: Chunk[] = [];
  /** The next slot to read in `chunks[0]`. */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(key: string, at: number): void {
    let last = this.chunks[this.chunks.length - 1];
    if (!last || last.length === CHUNK) {
      last = { keys: new Array<string | undefined>(CHUNK), at: new Float64Array(CHUNK), length: 0 };
      this.chunks.push(last);
    }
    last.keys[last.length] = key;
    last.at[last.length] = at;
    last.length++;
    this.count++;
  }

  /** The oldest key, or undefined when empty. */
  frontKey(): string | undefined {
    return this.count === 0 ? undefined : this.chunks[0]!.keys[this.head];
  }

  /** The oldest key's arrival time (NaN when empty). */
  frontAt(): number {
    return this.count === 0 ? Number.NaN : this.chunks[0]!.at[this.head]!;
  }

  /** Drops the oldest key. */
  dropFront(): void {
    if (this.count === 0) return;
    const first = this.chunks[0]!;
    first.keys[this.head] = undefined; // the key string may be collected now
    this.head++;
    this.count--;
    if (this.head === first.length) {
      // Read to its end: either full, or the last chunk and now empty.
      this.chunks.shift();
      this.head = 0;
    }
  }
}
