import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireInstanceLock, AlreadyRunningError, isStartCommandLine } from './instance-lock.js';

describe('isStartCommandLine', () => {
  it.each([
    ['node\0deploy/dist/local/start.js\0', true],
    ['/usr/bin/node /work/main/deploy/dist/local/start.js', true],
    ['node\0/srv/tributary/deploy/dist/local/start.js', true],
    ['/usr/bin/node --initial-old-space-size=96 /work/main/services/ingest/dist/main.js', false],
    ['python3\0-m\0http.server\0', false],
    ['node\0other/start.js', false],
  ])('%j → %s', (cmdline, expected) => {
    expect(isStartCommandLine(cmdline)).toBe(expected);
  });
});

describe('acquireInstanceLock', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tributary-lock-'));
    file = join(dir, 'sub', 'start.pid');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a free lock, writing its pid, and releases it', async () => {
    const lock = await acquireInstanceLock(file, { pid: 4242, ownerRunning: async () => true });
    expect(await readFile(file, 'utf8')).toBe('4242\n');
    lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('refuses while the owner is a running npm start', async () => {
    await acquireInstanceLock(file, { pid: 4242, ownerRunning: async () => true });
    const second = acquireInstanceLock(file, { pid: 5151, ownerRunning: async (pid) => pid === 4242 });
    await expect(second).rejects.toBeInstanceOf(AlreadyRunningError);
    await expect(second).rejects.toThrow('another `npm start` (pid 4242) is already running');
    expect(await readFile(file, 'utf8')).toBe('4242\n');
  });

  it('takes over a lock whose owner is gone or whose pid now runs something else', async () => {
    await acquireInstanceLock(file, { pid: 4242, ownerRunning: async () => true });
    const asked: number[] = [];
    const lock = await acquireInstanceLock(file, {
      pid: 5151,
      ownerRunning: async (pid) => {
        asked.push(pid);
        return false;
      },
    });
    expect(asked).toEqual([4242]);
    expect(await readFile(file, 'utf8')).toBe('5151\n');
    lock.release();
  });

  it('does not delete a lock another run has taken over since', async () => {
    const lock = await acquireInstanceLock(file, { pid: 4242, ownerRunning: async () => true });
    await writeFile(file, '5151\n');
    lock.release();
    expect(await readFile(file, 'utf8')).toBe('5151\n');
  });

  it('treats a lock without a pid, still empty after a moment, as stale', async () => {
    await acquireInstanceLock(file, { pid: 4242, ownerRunning: async () => true });
    await writeFile(file, '');
    const lock = await acquireInstanceLock(file, { pid: 5151, ownerRunning: async () => true });
    expect(await readFile(file, 'utf8')).toBe('5151\n');
    lock.release();
  });
});
