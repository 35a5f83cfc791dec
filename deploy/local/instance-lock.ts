/**
 * One `npm start` per checkout: two would fight over the ports, the stack's data dir and the
 * services' pid file. The lock is taken before anything else (the stack can take a minute to
 * come up, and a second run started meanwhile would otherwise get as far as the ports), and
 * released when the process exits. A lock whose owner is gone, or whose pid now belongs to an
 * unrelated program, is stale and taken over.
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isAlive, readCommandLine } from './processes.js';

/**
 * Whether a command line (NUL-separated from /proc, space-separated from ps) runs the start
 * script — `node deploy/dist/local/start.js`, however the path was written. A pid recorded by
 * an `npm start` that died may since have been given to any other program.
 */
export function isStartCommandLine(cmdline: string): boolean {
  return cmdline
    .split(/[\0\s]+/)
    .some((arg) => /(^|\/)local\/start\.js$/.test(arg));
}

/** Alive and running the start script. */
export async function isStartProcess(pid: number): Promise<boolean> {
  if (!isAlive(pid)) return false;
  const cmdline = await readCommandLine(pid);
  return cmdline !== null && isStartCommandLine(cmdline);
}

export class AlreadyRunningError extends Error {
  override readonly name = 'AlreadyRunningError';
  constructor(readonly owner: number) {
    super(`another \`npm start\` (pid ${owner}) is already running in this checkout; stop it first (Ctrl-C in its terminal, or \`kill ${owner}\`)`);
  }
}

export interface InstanceLock {
  /** Synchronous, so that it can run in an exit handler. Leaves a lock another process took over alone. */
  release(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function acquireInstanceLock(
  file: string,
  opts: { pid?: number; ownerRunning?: (pid: number) => Promise<boolean> } = {},
): Promise<InstanceLock> {
  const pid = opts.pid ?? process.pid;
  const ownerRunning = opts.ownerRunning ?? isStartProcess;
  await mkdir(dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await writeFile(file, `${pid}\n`, { flag: 'wx' });
      return {
        release: () => {
          try {
            if (readFileSync(file, 'utf8').trim() === String(pid)) unlinkSync(file);
          } catch {
            // Already gone.
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (!Number.isInteger(owner) || owner <= 1) {
      // Created but not yet written by a run starting this very moment: look again shortly.
      await sleep(200);
      if (attempt < 2) continue;
    } else if (owner === pid || !(await ownerRunning(owner))) {
      // Stale (our own pid in it means a dead run's pid was given to us): take it over. Two
      // runs doing this at the same instant could both win; that needs two starts within
      // milliseconds of each other after a crashed one.
    } else {
      throw new AlreadyRunningError(owner);
    }
    await rm(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}; delete it if no \`npm start\` is running`);
}
