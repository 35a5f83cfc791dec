import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FingerprintTable } from './fingerprint-table.js';

describe('FingerprintTable', () => {
  it('gets what was set, moves a key set again to the young end, and forgets from the old end', () => {
    const table = new FingerprintTable(10);
    table.setIfNewer('web/a', 1);
    table.setIfNewer('web/b', 2);
    table.setIfNewer('web/a', 3);
    expect([table.size, table.get('web/a'), table.get('web/b'), table.get('web/c')]).toEqual([2, 3, 2, undefined]);
    expect(table.oldestAt()).toBe(2);
    expect(table.deleteOldest()).toBe(true);
    expect([table.size, table.get('web/b'), table.oldestAt()]).toEqual([1, undefined, 3]);
    expect(table.deleteOldest()).toBe(true);
    expect([table.size, table.deleteOldest(), table.oldestAt()]).toEqual([0, false, Number.NaN]);
  });

  it('behaves as a Map in insertion order for any mix of sets, re-sets and deletions — across index collisions, ring wraps and compactions', () => {
    const operation = fc.oneof(
      { weight: 12, arbitrary: fc.record({ set: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ drop: fc.integer({ min: 1, max: 8 }) }) },
    );
    fc.assert(
      // Fewer keys than the capacity: nothing is evicted, and re-sets pile stale places up behind
      // the cold key until the ring is compacted. More: evictions drop them at the front.
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }), fc.boolean(), fc.array(operation, { minLength: 150, maxLength: 600 }), (capacity, keys, drops, generated) => {
        // Without drops the cold key stays the oldest for as long as the capacity allows.
        const operations = drops ? generated : generated.filter((op) => 'set' in op);
        const table = new FingerprintTable(capacity);
        const model = new Map<string, number>();
        // Set once and never again: while it stays the oldest, stale places pile up behind it.
        table.setIfNewer('src/cold', 0);
        model.set('src/cold', 0);
        let clock = 0;
        for (const op of operations) {
          if ('set' in op) {
            const key = `src/m-${op.set % keys}`;
            model.delete(key);
            model.set(key, ++clock);
            table.setIfNewer(key, clock);
            // The caller's rule: never more than the capacity live.
            while (model.size > capacity) {
              model.delete(model.keys().next().value as string);
              expect(table.deleteOldest()).toBe(true);
            }
          } else {
            for (let i = 0; i < op.drop; i++) {
              const oldest = model.keys().next();
              expect(table.deleteOldest()).toBe(!oldest.done);
              if (!oldest.done) model.delete(oldest.value);
            }
          }
          expect(table.size).toBe(model.size);
          expect(table.oldestAt()).toBe(model.size === 0 ? Number.NaN : model.values().next().value);
          for (let key = 0; key < keys; key++) expect(table.get(`src/m-${key}`)).toBe(model.get(`src/m-${key}`));
          expect(table.get('src/cold')).toBe(model.get('src/cold'));
        }
      }),
      { numRuns: 60 },
    );
  }, 30_000);
});
