/**
 * A throwaway PostgreSQL server for tests: a fresh cluster (initdb) in a temporary
 * directory, listening on a free loopback port, stopped and deleted at the end. Tests of
 * code that talks to PostgreSQL run against this real server, never a mock.
 *
 * The server binaries come from the machine: Debian's `/usr/lib/postgresql/<major>/bin`
 * (the newest major wins), else `initdb` and `pg_ctl` on PATH. `scripts/ensure-installed.mjs`
 * installs Debian's `postgresql` package for `npm test` when they are missing; when they are
 * still missing this throws, naming what to install — a test needing PostgreSQL never skips.
 *
 * initdb and postgres refuse to run as root, so as root every server command runs as the
 * `postgres` system user (`runuser -u postgres --`), in a directory that user owns.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { runCommand } from './java.js';
import { isAlive } from './processes.js';

export interface PostgresBinaries {
  binDir: string;
  initdb: string;
  pgCtl: string;
}

export class PostgresNotInstalled extends Error {
  constructor(searched: string[]) {
    super(
      `PostgreSQL server binaries (initdb, pg_ctl) not found (looked in ${searched.join(', ')}). ` +
        'Install the PostgreSQL server: on Debian/Ubuntu `apt-get install postgresql` (npm test does this itself when it runs as root or with passwordless sudo); ' +
        'elsewhere put initdb and pg_ctl on PATH.',
    );
    this.name = 'PostgresNotInstalled';
  }
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The newest Debian major first (`15` before `9`), then PATH. Pure apart from the file checks. */
export function findPostgresBinaries(
  env: NodeJS.ProcessEnv = process.env,
  fs: { exists: (path: string) => boolean; list: (dir: string) => string[] } = { exists: existsSync, list: safeList },
): PostgresBinaries {
  const candidates: string[] = [];
  const majors = fs
    .list(DEBIAN_ROOT)
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  for (const major of majors) candidates.push(join(DEBIAN_ROOT, major, 'bin'));
  for (const dir of (env['PATH'] ?? '').split(delimiter)) if (dir) candidates.push(dir);
  for (const binDir of candidates) {
    const initdb = join(binDir, 'initdb');
    const pgCtl = join(binDir, 'pg_ctl');
    if (fs.exists(initdb) && fs.exists(pgCtl)) return { binDir, initdb, pgCtl };
  }
  throw new PostgresNotInstalled([`${DEBIAN_ROOT}/*/bin`, 'PATH']);
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export interface ThrowawayPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` — trust authentication, loopback only. */
  url: string;
  port: number;
  /** The cluster's data directory. */
  dataDir: string;
  logFile: string;
  /** URL of another database on the same server. */
  urlFor(database: string): string;
  /** Stops the server, keeping its data (to test what a client does while it is away). */
  stop(): Promise<void>;
  /** Starts it again on the same port after `stop()`. */
  start(): Promise<void>;
  /** Stops the server and deletes the cluster. */
  destroy(): Promise<void>;
}

export interface StartPostgresOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

const OWNER_FILE = 'owner.json';
const DIR_PREFIX = 'tributary-pg-';

/** Who runs the server commands: ourselves, or the `postgres` user when we are root. */
function runAs(): { prefix: string[]; uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { prefix: [] };
  let ids: string;
  try {
    ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim() + ':' + execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('running as root, and initdb refuses root: a "postgres" system user is needed to run the test server (the Debian postgresql package creates it)');
  }
  const [uid, gid] = ids.split(':').map(Number);
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid: uid!, gid: gid! };
}

async function run(prefix: string[], command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const [cmd, ...rest] = prefix.length > 0 ? [...prefix, command, ...args] : [command, ...args];
  const result = await runCommand(cmd!, rest, { env: { ...env, LANG: 'C', LC_ALL: 'C' }, cwd: tmpdir() });
  if (result.spawnError) throw new Error(`could not run ${cmd}: ${result.spawnError.message}`);
  if (result.code !== 0) throw new Error(`${[command, ...args].join(' ')} failed (exit ${result.code}):\n${result.output.trim()}`);
  return result.output;
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * Clusters left by test runs that died (the runner killed): stop their servers and delete
 * them, so they neither run on nor fill the temporary directory.
 */
async function sweepAbandoned(binaries: PostgresBinaries, prefix: string[], env: NodeJS.ProcessEnv): Promise<void> {
  for (const name of safeList(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number | undefined;
    try {
      owner = (JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as { pid?: number }).pid;
    } catch {
      continue;
    }
    if (typeof owner !== 'number' || isAlive(owner)) continue;
    await run(prefix, binaries.pgCtl, ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop'], env).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** initdb + start on a free loopback port. Throws `PostgresNotInstalled` when the binaries are missing. */
export async function startThrowawayPostgres(options: StartPostgresOptions = {}): Promise<ThrowawayPostgres> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const binaries = findPostgresBinaries(env);
  const user = runAs();
  await sweepAbandoned(binaries, user.prefix, env);

  const root = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(root, OWNER_FILE), `${JSON.stringify({ pid: process.pid })}\n`);
  if (user.uid !== undefined) chownSync(root, user.uid, user.gid!);
  const dataDir = join(root, 'data');
  const logFile = join(root, 'postgres.log');
  try {
    // No fsync: the cluster lives for one test run; trust auth: loopback only, no secret to leak.
    await run(user.prefix, binaries.initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'], env);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const port = await freeLoopbackPort();
  const serverOptions = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${root}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=50',
  ].join(' ');
  const start = async (): Promise<void> => {
    await run(user.prefix, binaries.pgCtl, ['-D', dataDir, '-l', logFile, '-o', serverOptions, '-w', '-t', '60', 'start'], env);
  };
  const stop = async (): Promise<void> => {
    await run(user.prefix, binaries.pgCtl, ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'], env);
  };
  try {
    await start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  log(`PostgreSQL (${binaries.binDir}) on 127.0.0.1:${port}, data in ${dataDir}`);
  let destroyed = false;
  const urlFor = (database: string) => `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return {
    url: urlFor('postgres'),
    port,
    dataDir,
    logFile,
    urlFor,
    stop,
    start,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await stop().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
