/**
 * The dedup state's storage: 128-bit fingerprints of the keys with the time each was
 * remembered, in typed arrays outside the JavaScript heap.
 *
 * Why not a `Map<string, number>`: two million ids of ~60 characters held about 285 MB of heap,
 * more than the 259 MB heap Node gives a process in a 512 MiB container (the Helm chart's router
 * limit): a router filling its state ran out of memory, and until then every major collection
 * marked those two million strings again. Here an entry costs 24 bytes of ring and at most
 * 16 of index, outside the heap, whatever the key's length: about 80 MB resident for two
 * million, 4 MB of heap.
 *
 * Layout: a ring of entries in the order they were set (4 fingerprint words and a time each),
 * and an open-addressing index (linear probing, deletion by backward shift) from fingerprint to
 * ring slot. A fingerprint set again gets a new place at the young end; its older place is
 * marked stale (time NaN) and dropped when it reaches the front. A ring full of stale places is
 * compacted.
 *
 * Fingerprints are SHA-1 truncated to 128 bits: ids are chosen by clients, so the hash must not
 * let anyone make two keys collide (a collision would drop a message as a repeat); at 2 × 10⁶
 * entries, a chance collision with any of them is 2⁻¹⁰⁷ per lookup.
 */
import { hash } from 'node:crypto';

const WORDS = 4;
/** Bytes one entry takes in the ring (fingerprint and time) and, at most, in the index. */
export const FINGERPRINT_ENTRY_BYTES = WORDS * 4 + 8 + 16;
/** The index is kept at most this full (linear probing stays short below it). */
const MAX_LOAD = 0.75;

export class FingerprintTable {
  private readonly words: Uint32Array;
  private readonly times: Float64Array;
  /** Ring slot + 1 per index slot; 0 is empty. */
  private readonly index: Int32Array;
  private readonly mask: number;
  private readonly ringSize: number;
  /** The oldest place in the ring, and how many places are used (live and stale). */
  private head = 0;
  private used = 0;
  private live = 0;
  private readonly scratch = new Uint32Array(WORDS);

  /** `capacity`: live entries at most. The ring has room for some stale places beside them. */
  constructor(readonly capacity: number) {
    this.ringSize = capacity + Math.max(64, Math.ceil(capacity / 8));
    this.words = new Uint32Array(this.ringSize * WORDS);
    this.times = new Float64Array(this.ringSize);
    let slots = 16;
    while (slots * MAX_LOAD < this.ringSize) slots *= 2;
    this.index = new Int32Array(slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.live;
  }

  /** When `key` was set, or undefined. */
  get(key: string): number | undefined {
    const fingerprint = this.fingerprint(key);
    const slot = this.find(fingerprint);
    return slot < 0 ? undefined : this.times[this.index[slot]! - 1];
  }

  /**
   * Sets `key`'s time, moving it to the young end, unless it holds one at least as new; true
   * when set. One fingerprint for the look-up and the write. The caller keeps `size` within
   * `capacity`.
   */
  setIfNewer(key: string, at: number): boolean {
    const fingerprint = this.fingerprint(key);
    let slot = this.find(fingerprint);
    if (slot >= 0 && this.times[this.index[slot]! - 1]! >= at) return false;
    if (slot >= 0) {
      this.times[this.index[slot]! - 1] = Number.NaN;
      this.live--;
    }
    if (this.used === this.ringSize) {
      // Compaction drops the stale place just made and indexes the rest anew.
      this.compact();
      slot = -1;
      if (this.used === this.ringSize) throw new Error(`the dedup table is full: ${this.live} live entries for ${this.capacity}`);
    }
    const place = (this.head + this.used) % this.ringSize;
    this.words.set(fingerprint, place * WORDS);
    this.times[place] = at;
    this.used++;
    this.live++;
    if (slot >= 0) this.index[slot] = place + 1;
    else this.index[this.emptySlotFor(fingerprint)] = place + 1;
    return true;
  }

  /** The oldest live entry's time; NaN when there is none. */
  oldestAt(): number {
    this.dropStale();
    return this.used === 0 ? Number.NaN : this.times[this.head]!;
  }

  /** Forgets the oldest live entry; false when there is none. */
  deleteOldest(): boolean {
    this.dropStale();
    if (this.used === 0) return false;
    const place = this.head;
    this.unindex(place);
    this.times[place] = Number.NaN;
    this.head = (this.head + 1) % this.ringSize;
    this.used--;
    this.live--;
    return true;
  }

  private dropStale(): void {
    while (this.used > 0 && Number.isNaN(this.times[this.head]!)) {
      this.head = (this.head + 1) % this.ringSize;
      this.used--;
    }
  }

  private fingerprint(key: string): Uint32Array {
    const digest = hash('sha1', key, 'buffer');
    for (let word = 0; word < WORDS; word++) this.scratch[word] = digest.readUInt32LE(word * 4);
    return this.scratch;
  }

  private home(fingerprint: ArrayLike<number>): number {
    return fingerprint[0]! & this.mask;
  }

  private matches(place: number, fingerprint: Uint32Array): boolean {
    const at = place * WORDS;
    return this.words[at] === fingerprint[0] && this.words[at + 1] === fingerprint[1] && this.words[at + 2] === fingerprint[2] && this.words[at + 3] === fingerprint[3];
  }

  /** The index slot holding `fingerprint`, or -1. */
  private find(fingerprint: Uint32Array): number {
    for (let slot = this.home(fingerprint); ; slot = (slot + 1) & this.mask) {
      const entry = this.index[slot]!;
      if (entry === 0) return -1;
      if (this.matches(entry - 1, fingerprint)) return slot;
    }
  }

  private emptySlotFor(fingerprint: Uint32Array): number {
    let slot = this.home(fingerprint);
    while (this.index[slot] !== 0) slot = (slot + 1) & this.mask;
    return slot;
  }

  /** Removes the ring place's index slot, shifting back the entries probed past it. */
  private unindex(place: number): void {
    let slot = this.home(this.words.subarray(place * WORDS, place * WORDS + 1));
    for (let probes = 0; this.index[slot] !== place + 1; probes++) {
      if (probes > this.mask) throw new Error(`dedup table: ring place ${place} is not indexed`);
      slot = (slot + 1) & this.mask;
    }
    for (let next = (slot + 1) & this.mask; this.index[next] !== 0; next = (next + 1) & this.mask) {
      const wanted = this.words[(this.index[next]! - 1) * WORDS]! & this.mask;
      // The entry at `next` may fill the hole unless its home lies cyclically in (slot, next].
      const stays = slot <= next ? wanted > slot && wanted <= next : wanted > slot || wanted <= next;
      if (stays) continue;
      this.index[slot] = this.index[next]!;
      slot = next;
    }
    this.index[slot] = 0;
  }

  /** Moves the live places to the front of the ring, oldest first, and indexes them anew. */
  private compact(): void {
    const liveWords = new Uint32Array(this.live * WORDS);
    const liveTimes = new Float64Array(this.live);
    let kept = 0;
    for (let i = 0; i < this.used; i++) {
      const place = (this.head + i) % this.ringSize;
      if (Number.isNaN(this.times[place]!)) continue;
      liveWords.set(this.words.subarray(place * WORDS, (place + 1) * WORDS), kept * WORDS);
      liveTimes[kept++] = this.times[place]!;
    }
    this.words.set(liveWords);
    this.times.fill(Number.NaN);
    this.times.set(liveTimes);
    this.index.fill(0);
    this.head = 0;
    this.used = kept;
    for (let place = 0; place < kept; place++) {
      this.index[this.emptySlotFor(this.words.subarray(place * WORDS, (place + 1) * WORDS))] = place + 1;
    }
  }
}
