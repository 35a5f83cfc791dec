/**
 * The router's memory of forwarded message ids: a messageId repeated by the same source
 * within the window (`DEDUP_WINDOW`) is forwarded once.
 *
 * The durable copy is the dedup topic, written in the same transaction as the deliveries
 * (see dedup-store.ts): one record per routing transaction listing the ids it forwarded.
 * This is the in-memory view of it. Entries are keyed `<sourceId>/<messageId>` and hold
 * when the id was first forwarded, by the router's clock; they are held as fingerprints,
 * outside the JavaScript heap (fingerprint-table.ts).
 * Memory is bounded by `DEDUP_MAX_ENTRIES` and `DEDUP_MAX_BYTES` (ENTRY_BYTES an entry,
 * whatever its key's length): past either, the oldest entries are forgotten first, so under
 * that much traffic the effective window is shorter than configured
 * (`tributary_router_dedup_capacity_evictions_total` counts it).
 * The bound holds while the state is reloaded from the dedup topic too.
 *
 * Claims made while routing a chunk are held in a `DedupClaims` overlay and reach the
 * state only when the chunk's transaction committed, so an aborted transaction forgets
 * them; a repeat inside the same chunk is caught by the overlay.
 */

import type { DedupBatch } from '@tributary/schemas';
import { FINGERPRINT_ENTRY_BYTES, FingerprintTable } from './fingerprint-table.js';

/**
 * Ids per dedup record are bounded by bytes, well under the broker's 1 MiB record limit; a
 * routing transaction (ROUTER_MAX_BATCH ids of at most a few hundred bytes) fits in one.
 */
export const DEDUP_RECORD_MAX_BYTES = 512 * 1024;

export interface DedupOptions {
  windowMs: number;
  maxEntries: number;
  maxBytes: number;
  /** Called for each entry forgotten before its window ended because the state was full. */
  onCapacityEviction?: () => void;
}

export function dedupKey(sourceId: string, messageId: string): string {
  return `${sourceId}/${messageId}`;
}

/** Bytes one entry holds, whatever its key's length (fingerprint-table.ts). */
export const ENTRY_BYTES = FINGERPRINT_ENTRY_BYTES;

/** Entries the bounds allow: DEDUP_MAX_ENTRIES, and DEDUP_MAX_BYTES at ENTRY_BYTES each. */
export function dedupCapacity(options: Pick<DedupOptions, 'maxEntries' | 'maxBytes'>): number {
  return Math.max(1, Math.min(options.maxEntries, Math.floor(options.maxBytes / ENTRY_BYTES)));
}

export class DedupState {
  /**
   * Fingerprints of the keys with their first-seen times, in the order they were remembered —
   * (nearly) first-seen order, so the oldest come first. Storage is sized for the capacity
   * at once; the operating system maps its pages as they are first written.
   */
  private readonly table: FingerprintTable;

  constructor(readonly options: DedupOptions) {
    this.table = new FingerprintTable(dedupCapacity(options));
  }

  get size(): number {
    return this.table.size;
  }

  /** Bytes the entries hold. */
  get bytes(): number {
    return this.table.size * ENTRY_BYTES;
  }

  isDuplicate(key: string, now: number): boolean {
    const firstSeenAt = this.table.get(key);
    return firstSeenAt !== undefined && now - firstSeenAt < this.options.windowMs;
  }

  /**
   * Records that `key` was forwarded at `firstSeenAt`. Idempotent, and an older record of
   * the same key never replaces a newer one, so the topic's copy may be applied again
   * after this process committed the same entry itself.
   */
  remember(key: string, firstSeenAt: number, now: number): void {
    if (now - firstSeenAt >= this.options.windowMs) return;
    if (!this.table.setIfNewer(key, firstSeenAt)) return;
    while (this.table.size > this.table.capacity) {
      this.table.deleteOldest();
      this.options.onCapacityEviction?.();
    }
  }

  /**
   * Drops entries that have left the window, from the oldest on; stops at the first one
   * still inside it (a straggler further on is ignored by `isDuplicate` until then).
   */
  evictExpired(now: number): number {
    let evicted = 0;
    while (this.table.size > 0 && now - this.table.oldestAt() >= this.options.windowMs) {
      this.table.deleteOldest();
      evicted++;
    }
    return evicted;
  }

  claims(now: number): DedupClaims {
    return new DedupClaims(this, now);
  }
}

export class DedupClaims {
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly state: DedupState,
    readonly now: number,
  ) {}

  /** True the first time a key is seen within the window (the message may be forwarded). */
  claim(key: string): boolean {
    if (this.pending.has(key) || this.state.isDuplicate(key, this.now)) return false;
    this.pending.set(key, this.now);
    return true;
  }

  /**
   * The claimed ids as dedup records: one for the whole transaction, split only when they
   * would not fit in `maxBytes` (UTF-8 bytes estimated from above: 3 per UTF-16 unit).
   */
  records(maxBytes = DEDUP_RECORD_MAX_BYTES): DedupBatch[] {
    const records: DedupBatch[] = [];
    let keys: string[] = [];
    let bytes = 0;
    for (const key of this.pending.keys()) {
      const size = 3 * key.length + 5;
      if (keys.length > 0 && bytes + size > maxBytes) {
        records.push({ firstSeenAt: this.now, keys });
        keys = [];
        bytes = 0;
      }
      keys.push(key);
      bytes += size;
    }
    if (keys.length > 0) records.push({ firstSeenAt: this.now, keys });
    return records;
  }

  /** After the transaction committed. */
  commit(): void {
    for (const [key, firstSeenAt] of this.pending) this.state.remember(key, firstSeenAt, this.now);
  }
}
