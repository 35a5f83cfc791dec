import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBinaries, PostgresNotInstalled, startThrowawayPostgres, type ThrowawayPostgres } from './postgres.js';

describe('findPostgresBinaries', () => {
  const fs = (files: string[], dirs: Record<string, string[]> = {}) => ({
    exists: (path: string) => files.includes(path),
    list: (dir: string) => dirs[dir] ?? [],
  });

  it("prefers Debian's newest major over PATH", () => {
    const found = findPostgresBinaries(
      { PATH: '/usr/bin' },
      fs(
        ['/usr/lib/postgresql/9/bin/initdb', '/usr/lib/postgresql/9/bin/pg_ctl', '/usr/lib/postgresql/15/bin/initdb', '/usr/lib/postgresql/15/bin/pg_ctl', '/usr/bin/initdb', '/usr/bin/pg_ctl'],
        { '/usr/lib/postgresql': ['9', '15', 'README'] },
      ),
    );
    expect(found).toEqual({ binDir: '/usr/lib/postgresql/15/bin', initdb: '/usr/lib/postgresql/15/bin/initdb', pgCtl: '/usr/lib/postgresql/15/bin/pg_ctl' });
  });

  it('falls back to PATH, and needs both programs in one place', () => {
    const found = findPostgresBinaries({ PATH: '/a:/b' }, fs(['/a/initdb', '/b/initdb', '/b/pg_ctl']));
    expect(found.binDir).toBe('/b');
  });

  it('fails loudly, naming what to install', () => {
    expect(() => findPostgresBinaries({ PATH: '/nowhere' }, fs([]))).toThrow(PostgresNotInstalled);
    expect(() => findPostgresBinaries({ PATH: '/nowhere' }, fs([]))).toThrow(/apt-get install postgresql/);
  });
});

describe('startThrowawayPostgres (a real server)', () => {
  let server: ThrowawayPostgres;
  const psql = (sql: string) =>
    execFileSync(join(findPostgresBinaries().binDir, 'psql'), ['-X', '-A', '-t', '-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', '-c', sql], {
      encoding: 'utf8',
    }).trim();

  beforeAll(async () => {
    server = await startThrowawayPostgres();
  }, 120_000);
  afterAll(async () => server?.destroy());

  it('answers SQL on a loopback port, and survives a stop and start with its data', async () => {
    expect(server.url).toBe(`postgresql://postgres@127.0.0.1:${server.port}/postgres`);
    psql('create table t (x int); insert into t values (42)');
    await server.stop();
    expect(() => psql('select 1')).toThrow();
    await server.start();
    expect(psql('select x from t')).toBe('42');
  }, 120_000);
});
