/**
 * The change between an audience's current members and a new snapshot, both streamed in
 * user-id order (SortedRuns): who joined, who left, whose computed value changed. Neither
 * side is held in memory. Within one side the same user may appear more than once — a
 * snapshot listing someone twice, a compacted topic not yet compacted — and the last
 * entry wins.
 */
import { compareUserIds, type SortedEntry } from './sorted-runs.js';

/** A member as the diff sees it: `value` is the computed trait's JSON text, or undefined. */
export interface Member {
  userId: string;
  value: string | undefined;
}

export type MembershipChange =
  | { kind: 'join'; userId: string; value: string | undefined }
  | { kind: 'leave'; userId: string; previous: string | undefined }
  | { kind: 'change'; userId: string; value: string | undefined };

export interface DiffCounts {
  unchanged: number;
}

/** Collapses runs of one user id to the last entry; `decode` turns it into a member or undefined (not a member). */
export async function* lastPerUser(entries: AsyncIterable<SortedEntry>, decode: (payload: string) => string | undefined | null): AsyncGenerator<Member> {
  let pending: SortedEntry | undefined;
  for await (const entry of entries) {
    if (pending && pending.userId !== entry.userId) {
      const value = decode(pending.payload);
      if (value !== null) yield { userId: pending.userId, value };
    }
    pending = entry;
  }
  if (pending) {
    const value = decode(pending.payload);
    if (value !== null) yield { userId: pending.userId, value };
  }
}

/** Merges the two ordered member streams into changes; `counts.unchanged` is filled as it goes. */
export async function* diffMembers(current: AsyncIterable<Member>, wanted: AsyncIterable<Member>, counts: DiffCounts): AsyncGenerator<MembershipChange> {
  const before = current[Symbol.asyncIterator]();
  const after = wanted[Symbol.asyncIterator]();
  let old = await before.next();
  let now = await after.next();
  while (!old.done || !now.done) {
    const order = old.done ? 1 : now.done ? -1 : compareUserIds(old.value.userId, now.value.userId);
    if (order < 0) {
      yield { kind: 'leave', userId: old.value.userId, previous: old.value.value };
      old = await before.next();
    } else if (order > 0) {
      yield { kind: 'join', userId: now.value.userId, value: now.value.value };
      now = await after.next();
    } else {
      if (old.value.value === now.value.value) counts.unchanged++;
      else yield { kind: 'change', userId: now.value.userId, value: now.value.value };
      old = await before.next();
      now = await after.next();
    }
  }
}
