import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { runCommand } from './java.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DetachedProcess {
  name: string;
  pid: number;
  logFile: string;
  child: ChildProcess;
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<ExitInfo>;
  /** Non-null once exited; lets readiness polling fail fast. */
  exitInfo(): ExitInfo | null;
}

const MAX_LOG_BYTES = 50 * 1024 * 1024;

/** Keeps one previous generation so a log file cannot grow without bound across restarts. */
export function rotateIfLarge(logFile: string): void {
  try {
    if (statSync(logFile).size > MAX_LOG_BYTES) renameSync(logFile, `${logFile}.1`);
  } catch {
    // No log yet: nothing to rotate.
  }
}

/**
 * Starts a program in its own session/process group with stdout+stderr appended to
 * `logFile`. Its own group means a terminal Ctrl-C reaches only the orchestrator, which then
 * stops things in order instead of every JVM racing to shut down at once.
 */
export function spawnDetached(opts: {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): DetachedProcess {
  rotateIfLarge(opts.logFile);
  const fd = openSync(opts.logFile, 'a');
  writeSync(fd, `\n===== ${new Date().toISOString()} starting ${opts.name}: ${opts.command} ${opts.args.join(' ')}\n`);
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(fd);
  }
  let info: ExitInfo | null = null;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      info = { code, signal };
      resolve(info);
    });
    child.once('error', () => {
      info = { code: null, signal: null };
      resolve(info);
    });
  });
  if (child.pid === undefined) {
    throw new Error(`could not start ${opts.name} ("${opts.command}")`);
  }
  return { name: opts.name, pid: child.pid, logFile: opts.logFile, child, exited, exitInfo: () => info };
}

/** Alive and not a zombie (an unreaped zombie still answers kill 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc (macOS): kill 0 is the best we have.
    return true;
  }
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Negative pid: the whole process group the detached child leads.
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitGone(pid: number, ms: number, exited?: Promise<unknown>): Promise<boolean> {
  const deadline = Date.now() + ms;
  if (exited) {
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
    if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'exited') return true;
    return !isAlive(pid);
  }
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

export type StopOutcome = 'not-running' | 'terminated' | 'killed' | 'unkillable';

/** SIGTERM to the group, up to `graceMs` for a clean exit, then SIGKILL. */
export async function stopProcess(
  pid: number,
  opts: { graceMs: number; exited?: Promise<unknown> },
): Promise<StopOutcome> {
  if (!isAlive(pid)) return 'not-running';
  signalGroup(pid, 'SIGTERM');
  if (await waitGone(pid, opts.graceMs, opts.exited)) return 'terminated';
  signalGroup(pid, 'SIGKILL');
  return (await waitGone(pid, 5_000, opts.exited)) ? 'killed' : 'unkillable';
}

/** The command line of any process, for telling our JVMs from a reused pid. */
export async function readCommandLine(pid: number): Promise<string | null> {
  try {
    return await readFile(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    const ps = await runCommand('ps', ['-ww', '-o', 'command=', '-p', String(pid)]);
    return ps.code === 0 ? ps.output.trim() : null;
  }
}

/** The last lines of a log, reading only its end: JVM logs can be tens of megabytes. */
export async function tailFile(path: string, lines: number): Promise<string> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const text = buffer.toString('utf8').trimEnd();
    return text ? text.split('\n').slice(-lines).join('\n') : '(empty log)';
  } catch {
    return '(no log output)';
  } finally {
    await handle?.close();
  }
}
