import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartitionLedger, type Output } from './ledger.js';

const out = (name: string, size = 10): Output => ({ topic: 't.retry.10s.v1', key: name, value: Buffer.alloc(size - name.length) });
const keys = (outputs: Output[]) => outputs.map((output) => output.key);

describe('PartitionLedger', () => {
  it('commits nothing before the first delivery settles', () => {
    const ledger = new PartitionLedger('d', 0, 10n);
    ledger.read(10n);
    ledger.read(11n);
    expect(ledger.take(1_000)).toBeUndefined();
    expect(ledger.unsettled).toBe(2);
  });

  it('holds a settled outcome back until every delivery before it settled, then writes it with the offset past it', () => {
    const ledger = new PartitionLedger('d', 0, 0n);
    for (const offset of [0n, 1n, 2n]) ledger.read(offset);
    ledger.settle(1n, [out('r1')]);
    ledger.settle(2n, []);
    expect(ledger.take(1_000)).toBeUndefined();
    expect(ledger.stagedBytes).toBe(10);
    ledger.settle(0n, [out('a0')]);
    const batch = ledger.take(1_000)!;
    expect(keys(batch.outputs)).toEqual(['a0', 'r1']);
    expect(batch.nextOffset).toBe(3n);
    ledger.confirm();
    expect(ledger.stagedBytes).toBe(0);
    expect(ledger.committedOffset).toBe(3n);
    expect(ledger.take(1_000)).toBeUndefined();
  });

  it('splits a long settled run by bytes, committing only as far as the records it carries', () => {
    const ledger = new PartitionLedger('d', 0, 0n);
    for (let offset = 0n; offset < 5n; offset++) {
      ledger.read(offset);
      ledger.settle(offset, [out(`o${offset}`, 40)]);
    }
    const first = ledger.take(100)!;
    expect(keys(first.outputs)).toEqual(['o0', 'o1']);
    expect(first.nextOffset).toBe(2n);
    expect(first.full).toBe(true);
    ledger.confirm();
    expect(keys(ledger.take(100)!.outputs)).toEqual(['o2', 'o3']);
    ledger.confirm();
    const last = ledger.take(100)!;
    expect(keys(last.outputs)).toEqual(['o4']);
    expect(last.nextOffset).toBe(5n);
    expect(last.full).toBe(false);
  });

  it('is not full when what it left is not settled yet: that cannot go at once', () => {
    const ledger = new PartitionLedger('d', 0, 0n);
    for (let offset = 0n; offset < 3n; offset++) ledger.read(offset);
    ledger.settle(0n, [out('o0', 40)]);
    ledger.settle(2n, [out('o2', 40)]);
    const batch = ledger.take(100)!;
    expect([keys(batch.outputs), batch.full]).toEqual([['o0'], false]);
  });

  it('always takes at least one entry, however large', () => {
    const ledger = new PartitionLedger('d', 0, 0n);
    ledger.read(0n);
    ledger.settle(0n, [out('big', 5_000)]);
    expect(keys(ledger.take(100)!.outputs)).toEqual(['big']);
  });

  it('gives the same records again after a failed transaction', () => {
    const ledger = new PartitionLedger('d', 0, 0n);
    ledger.read(0n);
    ledger.settle(0n, [out('r0')]);
    expect(keys(ledger.take(1_000)!.outputs)).toEqual(['r0']);
    ledger.restore();
    ledger.read(1n);
    ledger.settle(1n, [out('r1')]);
    const again = ledger.take(1_000)!;
    expect(keys(again.outputs)).toEqual(['r0', 'r1']);
    expect(again.nextOffset).toBe(2n);
  });

  it('moves past gaps and transaction markers once everything read is settled', () => {
    const ledger = new PartitionLedger('d', 1, 5n);
    ledger.read(5n);
    ledger.read(7n);
    ledger.readUpTo(8n);
    ledger.settle(7n, []);
    ledger.settle(5n, []);
    expect(ledger.take(1_000)!.nextOffset).toBe(9n);
  });

  it('recognises records re-fetched after a rebalance and refuses to read or settle one twice', () => {
    const ledger = new PartitionLedger('d', 0, 100n);
    ledger.read(100n);
    expect(ledger.hasRead(100n)).toBe(true);
    expect(ledger.hasRead(101n)).toBe(false);
    expect(() => ledger.read(100n)).toThrow(/already read/);
    ledger.settle(100n, []);
    expect(() => ledger.settle(100n, [])).toThrow(/not awaiting/);
  });

  it('writes every outcome exactly once, in offset order, whatever the settle order and failures (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.integer({ min: 1, max: 80 })), { minLength: 20, maxLength: 200 }),
        (count, steps) => {
          const ledger = new PartitionLedger('d', 0, 0n);
          for (let offset = 0; offset < count; offset++) ledger.read(BigInt(offset));
          const unsettled = Array.from({ length: count }, (_, offset) => offset);
          const written: string[] = [];
          let committed = 0n;
          const drain = (fail: boolean, budget: number) => {
            const batch = ledger.take(budget);
            if (!batch) return;
            if (fail) return ledger.restore();
            written.push(...keys(batch.outputs));
            expect(batch.nextOffset).toBeGreaterThan(committed);
            committed = batch.nextOffset;
            ledger.confirm();
          };
          for (const [pick, fail, budget] of steps) {
            if (unsettled.length > 0) {
              const [offset] = unsettled.splice(pick % unsettled.length, 1);
              ledger.settle(BigInt(offset!), offset! % 3 === 0 ? [] : [out(`k${offset}`)]);
            }
            drain(fail, budget);
          }
          for (const offset of unsettled) ledger.settle(BigInt(offset), offset % 3 === 0 ? [] : [out(`k${offset}`)]);
          for (let guard = 0; guard < 1_000 && ledger.take(Number.MAX_SAFE_INTEGER) !== undefined; guard++) {
            ledger.restore();
            drain(false, 50);
          }
          const expected = Array.from({ length: count }, (_, offset) => offset).filter((offset) => offset % 3 !== 0).map((offset) => `k${offset}`);
          expect(written).toEqual(expected);
          expect(ledger.committedOffset).toBe(BigInt(count));
          expect(ledger.stagedBytes).toBe(0);
        },
      ),
    );
  });
});
