/**
 * Binary arrays as both databases read them: a throwaway PostgreSQL server through
 * node-postgres, and PGlite — each must hand back exactly what was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayPostgres, type ThrowawayPostgres } from '@tributary/deploy/postgres';
import { binaryArray } from './binary-array.js';
import type { SqlClient } from './client.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

let server: ThrowawayPostgres;
const clients: SqlClient[] = [];
beforeAll(async () => {
  server = await startThrowawayPostgres();
}, 120_000);
afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.destroy();
});

const texts = ['plain', 'quotes " and \\ backslashes, {braces}, commas', '', 'é€😀 \t\n', '{"k":"\\u0000"}', null, 'x'.repeat(100_000)];
const int4s = [0, -1, 2 ** 31 - 1, -(2 ** 31), null];
const int8s = [0, -1, 1_764_000_000_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 32, null];

describe.each([
  ['PostgreSQL', async () => openPostgres({ url: server.url })],
  ['PGlite', async () => openPglite(undefined)],
])('binary arrays on %s', (_name, open) => {
  it('come back as sent: text (quotes, backslashes, non-ASCII, long), int4 and int8 (negative, beyond 32 bits), NULLs, empty', async () => {
    const db = await open();
    clients.push(db);
    const { rows } = await db.query<{ t: (string | null)[]; i: (number | null)[]; b: (string | number | null)[]; e: string[]; n: number }>(
      'SELECT $1::text[] AS t, $2::int4[] AS i, $3::int8[]::text[] AS b, $4::text[] AS e, cardinality($1::text[]) AS n',
      [binaryArray('text', texts), binaryArray('int4', int4s), binaryArray('int8', int8s), binaryArray('text', [])],
    );
    const row = rows[0];
    expect(row?.t).toEqual(texts);
    expect(row?.i).toEqual(int4s);
    // int8 read back as text: both drivers would otherwise round or keep values beyond 2^53 their own way.
    expect(row?.b).toEqual(int8s.map((value) => (value === null ? null : String(value))));
    expect(row?.e).toEqual([]);
    expect(row?.n).toBe(texts.length);
  });

  it('unnest side by side in order, as a batch write reads them', async () => {
    const db = await open();
    clients.push(db);
    const { rows } = await db.query<{ t: string | null; b: string | null; ord: string | number }>(
      'SELECT u.t, u.b::text AS b, u.ord FROM unnest($1::text[], $2::int8[]) WITH ORDINALITY AS u(t, b, ord) ORDER BY u.ord',
      [binaryArray('text', ['a', null, 'c']), binaryArray('int8', [1, 2, null])],
    );
    expect(rows.map((row) => [row.t, row.b, Number(row.ord)])).toEqual([
      ['a', '1', 1],
      [null, '2', 2],
      ['c', null, 3],
    ]);
  });
});
