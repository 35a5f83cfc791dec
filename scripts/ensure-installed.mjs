#!/usr/bin/env node
// Makes `npm start` / `npm test` work on a fresh clone without a separate install step:
// runs `npm ci` (or `npm install` when there is no lockfile yet) when node_modules is
// missing or older than the lockfile; with `--for-tests`, also installs the PostgreSQL server
// the tests need when it is missing. Plain Node, no dependencies, because it runs
// before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`Tributary needs Node >= 20.19; this is ${process.versions.node}.`);
  process.exit(1);
}

// `--for-tests` (npm test): the tests also need a PostgreSQL server (the delivery log's store
// is tested against a real one as well as the embedded PGlite).
if (process.argv.includes('--for-tests')) ensurePostgresServer();

const upToDate =
  existsSync(marker) && existsSync(lockfile) && statSync(marker).mtimeMs >= statSync(lockfile).mtimeMs;
if (upToDate) process.exit(0);

const args = existsSync(lockfile) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
console.error(`[tributary] installing dependencies: npm ${args.join(' ')}`);
const result = spawnSync('npm', args, { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);

/** initdb and pg_ctl where deploy/local/postgres.ts looks: Debian's /usr/lib/postgresql/<major>/bin, then PATH. */
function postgresServerFound() {
  const dirs = [];
  try {
    for (const major of readdirSync('/usr/lib/postgresql')) dirs.push(join('/usr/lib/postgresql', major, 'bin'));
  } catch {
    // not Debian's layout
  }
  dirs.push(...(process.env.PATH ?? '').split(delimiter).filter(Boolean));
  return dirs.some((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

function ensurePostgresServer() {
  if (postgresServerFound()) return;
  const hint = 'Install the PostgreSQL server (Debian/Ubuntu: `apt-get install postgresql`; elsewhere put initdb and pg_ctl on PATH) and run npm test again.';
  const hasAptGet = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!hasAptGet) {
    console.error(`[tributary] the tests need a PostgreSQL server and none was found. ${hint}`);
    process.exit(1);
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = isRoot ? [] : ['sudo', '-n'];
  if (!isRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status !== 0) {
    console.error(`[tributary] the tests need a PostgreSQL server, none was found, and installing one needs root (no passwordless sudo here). ${hint}`);
    process.exit(1);
  }
  const run = (args) => {
    const [command, ...rest] = [...sudo, ...args];
    console.error(`[tributary] ${[command, ...rest].join(' ')}`);
    return spawnSync(command, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
  };
  console.error('[tributary] the tests need a PostgreSQL server; installing Debian\'s postgresql package');
  const installed = run(['apt-get', 'update']) && run(['apt-get', 'install', '-y', '--no-install-recommends', 'postgresql']);
  if (!installed || !postgresServerFound()) {
    console.error(`[tributary] installing PostgreSQL failed. ${hint}`);
    process.exit(1);
  }
}
