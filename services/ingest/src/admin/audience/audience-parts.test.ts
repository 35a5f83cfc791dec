import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { lines, MemberLineError, parseMemberLine } from './member-lines.js';
import { diffMembers, lastPerUser, type Member, type MembershipChange } from './membership-diff.js';
import { SortedRuns, type SortedEntry } from './sorted-runs.js';

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe('lines', () => {
  it('cuts lines across chunk borders, numbers them, drops \\r and keeps a last line without newline', async () => {
    const chunks = ['{"userId":"a"}\n{"user', 'Id":"b"}\r\n\n{"userId":"c"}'].map((text) => Buffer.from(text));
    expect(await collect(lines(from(chunks)))).toEqual([
      { text: '{"userId":"a"}', line: 1 },
      { text: '{"userId":"b"}', line: 2 },
      { text: '', line: 3 },
      { text: '{"userId":"c"}', line: 4 },
    ]);
  });

  it('refuses a line over the limit without buffering it', async () => {
    const endless = (async function* () {
      yield Buffer.from('{"userId":"a"}\n');
      for (;;) yield Buffer.alloc(1024, 0x61);
    })();
    await expect(collect(lines(endless, 4096))).rejects.toThrow(new MemberLineError(2, 'longer than 4096 bytes'));
  });
});

describe('parseMemberLine', () => {
  it('reads a member, with or without a value, and skips blank lines', () => {
    expect(parseMemberLine('{"userId":"u1"}', 1)).toEqual({ userId: 'u1', value: undefined });
    expect(parseMemberLine('{"userId":"u1","value":{"tier":"gold"}}', 1)).toEqual({ userId: 'u1', value: '{"tier":"gold"}' });
    expect(parseMemberLine('  ', 1)).toBeUndefined();
  });

  it.each([
    ['u1', 'not valid JSON'],
    ['[1]', 'must be a JSON object'],
    ['{}', 'userId is required'],
    ['{"userId":7}', 'userId must be a string'],
    ['{"userId":""}', 'userId may not be empty'],
    ['{"userId":"u","value":null}', 'value may not be null'],
    ['{"userId":"u","email":"x"}', 'unknown field "email"'],
    [`{"userId":"${'u'.repeat(513)}"}`, 'userId must be at most 512 characters'],
    // Wrapped in the Identify's traits, 64 levels would be one more than the router takes.
    [`{"userId":"u","value":${'['.repeat(64)}${']'.repeat(64)}}`, 'value nests objects and arrays more than 63 levels deep'],
  ])('refuses %s, naming the line', (text, problem) => {
    expect(() => parseMemberLine(text, 7)).toThrow(`line 7: ${problem}`);
  });
});

describe('SortedRuns', () => {
  it('returns entries in user-id order, the same user in the order added, across many spilled runs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 4 })), { minLength: 100, maxLength: 300 }), async (pairs) => {
        const runs = new SortedRuns(200);
        try {
          for (const [userId, payload] of pairs) runs.add(userId, payload.replace(/[\n\r]/g, ''));
          const expected = pairs
            .map(([userId, payload], seq) => ({ userId, payload: payload.replace(/[\n\r]/g, ''), seq }))
            .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : a.seq - b.seq))
            .map(({ userId, payload }): SortedEntry => ({ userId, payload }));
          expect(await collect(runs.sorted())).toEqual(expected);
        } finally {
          runs.remove();
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('diffMembers', () => {
  const members = (entries: Array<[string, string | undefined]>): Member[] => entries.map(([userId, value]) => ({ userId, value }));

  it('finds who joined, who left and whose value changed, counting the rest', async () => {
    const counts = { unchanged: 0 };
    const changes = await collect(
      diffMembers(
        from(members([['a', undefined], ['b', '1'], ['c', undefined], ['e', '"x"']])),
        from(members([['b', '2'], ['c', undefined], ['d', undefined], ['e', '"x"']])),
        counts,
      ),
    );
    expect(changes).toEqual<MembershipChange[]>([
      { kind: 'leave', userId: 'a', previous: undefined },
      { kind: 'change', userId: 'b', value: '2' },
      { kind: 'join', userId: 'd', value: undefined },
    ]);
    expect(counts.unchanged).toBe(2);
  });

  it('agrees with a diff of in-memory sets for any two audiences', async () => {
    const audience = fc.uniqueArray(fc.string({ maxLength: 4 }), { maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(audience, audience, async (before, after) => {
        const sorted = (ids: string[]) => from(members([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).map((id) => [id, undefined])));
        const counts = { unchanged: 0 };
        const changes = await collect(diffMembers(sorted(before), sorted(after), counts));
        expect(new Set(changes.filter((c) => c.kind === 'join').map((c) => c.userId))).toEqual(new Set(after.filter((id) => !before.includes(id))));
        expect(new Set(changes.filter((c) => c.kind === 'leave').map((c) => c.userId))).toEqual(new Set(before.filter((id) => !after.includes(id))));
        expect(counts.unchanged).toBe(after.filter((id) => before.includes(id)).length);
      }),
    );
  });
});

describe('lastPerUser', () => {
  it('keeps the last entry of each user and drops those decoded as not members', async () => {
    const entries: SortedEntry[] = [
      { userId: 'a', payload: 'M' },
      { userId: 'a', payload: 'T' },
      { userId: 'b', payload: 'T' },
      { userId: 'b', payload: 'M5' },
      { userId: 'c', payload: 'M' },
    ];
    const decode = (payload: string) => (payload === 'T' ? null : payload.length > 1 ? payload.slice(1) : undefined);
    expect(await collect(lastPerUser(from(entries), decode))).toEqual([
      { userId: 'b', value: '5' },
      { userId: 'c', value: undefined },
    ]);
  });
});
