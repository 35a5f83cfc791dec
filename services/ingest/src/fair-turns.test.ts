import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairTurns } from './fair-turns.js';

/** A FairTurns whose loop turns run when the test says, on a clock each job advances by `jobMs`. */
function turnsUnderTest(budgetMs: number, jobMs: number) {
  const pending: Array<() => void> = [];
  let clock = 0;
  const turns = new FairTurns({ budgetMs, schedule: (run) => pending.push(run), now: () => clock });
  const ran: string[] = [];
  const submit = (key: string, name: string) =>
    turns.run(key, () => {
      clock += jobMs;
      ran.push(name);
      return name;
    });
  /** Runs the turns scheduled so far (not those they schedule). */
  const nextTurn = () => pending.splice(0).forEach((run) => run());
  return { turns, ran, submit, nextTurn, pending };
}

describe('FairTurns', () => {
  it('serves the sources waiting one request each in turn, each source in its own order', async () => {
    const { ran, submit, nextTurn, turns } = turnsUnderTest(1_000, 1);
    const done = [submit('flood', 'f1'), submit('flood', 'f2'), submit('flood', 'f3'), submit('healthy', 'h1'), submit('other', 'o1'), submit('healthy', 'h2')];
    expect(ran).toEqual([]);
    expect(turns.waiting).toBe(6);
    nextTurn();
    expect(ran).toEqual(['f1', 'h1', 'o1', 'f2', 'h2', 'f3']);
    expect(await Promise.all(done)).toEqual(['f1', 'f2', 'f3', 'h1', 'o1', 'h2']);
    expect(turns.waiting).toBe(0);
  });

  it('lets new requests in once a turn has used its budget; a newcomer waits for one request of the busy source', () => {
    const { ran, submit, nextTurn, pending } = turnsUnderTest(4, 3);
    for (let index = 1; index <= 5; index++) void submit('flood', `f${index}`);
    nextTurn();
    // 3 ms, then 6 ms: past the 4 ms budget after the second, so the rest wait for the next turn.
    expect(ran).toEqual(['f1', 'f2']);
    expect(pending).toHaveLength(1);
    void submit('healthy', 'h1');
    nextTurn();
    expect(ran).toEqual(['f1', 'f2', 'f3', 'h1']);
    nextTurn();
    expect(ran).toEqual(['f1', 'f2', 'f3', 'h1', 'f4', 'f5']);
    expect(pending).toHaveLength(0);
  });

  it('always does one request per turn, however long it takes', () => {
    const { ran, submit, nextTurn } = turnsUnderTest(4, 50);
    void submit('a', 'a1');
    void submit('a', 'a2');
    nextTurn();
    expect(ran).toEqual(['a1']);
    nextTurn();
    expect(ran).toEqual(['a1', 'a2']);
  });

  it('rejects with what the work throws, and goes on with the others', async () => {
    const pending: Array<() => void> = [];
    const turns = new FairTurns({ budgetMs: 4, schedule: (run) => pending.push(run) });
    const failing = turns.run('a', () => {
      throw new Error('bad body');
    });
    const fine = turns.run('b', () => 42);
    pending.splice(0).forEach((run) => run());
    await expect(failing).rejects.toThrow('bad body');
    await expect(fine).resolves.toBe(42);
  });

  it('runs on the next loop turn with the real scheduler', async () => {
    const turns = new FairTurns({ budgetMs: 4 });
    let ran = false;
    const result = turns.run('a', () => (ran = true));
    expect(ran).toBe(false);
    await expect(result).resolves.toBe(true);
  });

  it('runs every request once; a source never gets a (j+1)-th turn before another waiting one had its j-th (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 10 }), (keys, budgetMs) => {
        const { ran, submit, nextTurn, pending } = turnsUnderTest(budgetMs, 1);
        keys.forEach((key, index) => void submit(key, `${key}:${index}`));
        while (pending.length > 0) nextTurn();
        expect([...ran].sort()).toEqual(keys.map((key, index) => `${key}:${index}`).sort());
        const turnOf = new Map<string, number>();
        const seen = new Map<string, number>();
        for (const name of ran) {
          const key = name.split(':')[0]!;
          const turn = seen.get(key) ?? 0;
          seen.set(key, turn + 1);
          turnOf.set(name, turn);
          // Every key still waiting has had at least `turn` turns before this one's (turn+1)-th.
          for (const other of new Set(keys)) {
            const total = keys.filter((k) => k === other).length;
            if (other !== key && total > turn) expect(seen.get(other) ?? 0).toBeGreaterThanOrEqual(turn);
          }
        }
        // Within a key, in the order submitted.
        for (const key of new Set(keys)) {
          const order = ran.filter((name) => name.startsWith(`${key}:`)).map((name) => Number(name.split(':')[1]));
          expect(order).toEqual([...order].sort((x, y) => x - y));
        }
      }),
    );
  });
});
