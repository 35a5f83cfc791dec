/**
 * Which config checks a routing transaction waits for (pipeline.ts). A transaction that filtered
 * a message for config waits until the router's view is as recent as that message
 * (`configFilteredSources`), since the filtering may only mean the view is a step behind an
 * admin API write. But a source that stays filtered — sending with no destination, or beside a
 * disabled one (DELIVERY_DISABLE_ON_GONE disables them by itself) — would then make every
 * transaction wait for a check, a broker round trip: a third more router CPU at 1,000 events/s
 * (test/bench/ANALYSIS.md). So a source whose filtering a check confirmed is not checked again
 * for messages received within CONFIRMED_FOR_MS of that: a change made to such a source and used
 * within a second may meet a view that lags by the milliseconds the router's config reader takes
 * to read it. A source never filtered before — just created, or its first destination just
 * added — is always checked.
 *
 * Pure: the pipeline reports what its checks covered.
 */

/** How long a check's confirmation of a source's filtering is taken as standing. */
export const CONFIRMED_FOR_MS = 1_000;
/** Sources remembered at most (ids a direct producer made up could otherwise grow it). */
const MAX_SOURCES = 10_000;

export class ConfigChecks {
  /** Per source: the time the view was last confirmed current as of, for its filtering. */
  private readonly confirmedAsOf = new Map<string, number>();

  /** How recent the view must be (a check begun at or after it), for the `filtered` sources no recent check covers; undefined when none. */
  neededSince(filtered: ReadonlyMap<string, number>): number | undefined {
    let since: number | undefined;
    for (const [sourceId, needed] of filtered) {
      const confirmed = this.confirmedAsOf.get(sourceId);
      if (confirmed !== undefined && confirmed >= needed - CONFIRMED_FOR_MS) continue;
      if (since === undefined || needed > since) since = needed;
    }
    return since;
  }

  /** A check begun at or after `asOf` finished: the filtering of `filtered`'s sources stands as of then. */
  confirmed(filtered: ReadonlyMap<string, number>, asOf: number): void {
    if (this.confirmedAsOf.size >= MAX_SOURCES) this.confirmedAsOf.clear();
    for (const sourceId of filtered.keys()) this.confirmedAsOf.set(sourceId, Math.max(asOf, this.confirmedAsOf.get(sourceId) ?? Number.NEGATIVE_INFINITY));
  }
}
