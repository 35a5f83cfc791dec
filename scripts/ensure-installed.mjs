#!/usr/bin/env node
// Makes `npm start` / `npm test` work on a fresh clone without a separate install step:
// runs `npm ci` (or `npm install` when there is no lockfile yet) when node_modules is
// missing or older than the lockfile. With --for-tests (what `npm test` passes) it also
// installs, from Debian's packages, what the tests drive and npm cannot provide:
// - Chromium at /usr/bin/chromium, for the console's browser tests and the compat suite's
//   analytics.js client (the npm `playwright` package's own browser download cannot be reached
//   from every machine the tests run on);
// - a PostgreSQL server (initdb, pg_ctl), because the delivery log's store is tested against a
//   real one as well as the embedded PGlite.
// A test must fail rather than skip when either is missing, so a machine where they cannot be
// installed stops here with what to install. Plain Node, no dependencies, because it runs
// before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');
const CHROMIUM = '/usr/bin/chromium';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`Tributary needs Node >= 20.19; this is ${process.versions.node}.`);
  process.exit(1);
}

function installDependencies() {
  const upToDate =
    existsSync(marker) && existsSync(lockfile) && statSync(marker).mtimeMs >= statSync(lockfile).mtimeMs;
  if (upToDate) return;
  const args = existsSync(lockfile) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
  console.error(`[tributary] installing dependencies: npm ${args.join(' ')}`);
  const result = spawnSync('npm', args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** initdb and pg_ctl where deploy/local/postgres.ts looks: Debian's /usr/lib/postgresql/<major>/bin, then PATH. */
function postgresServerFound() {
  const dirs = [];
  try {
    for (const version of readdirSync('/usr/lib/postgresql')) dirs.push(join('/usr/lib/postgresql', version, 'bin'));
  } catch {
    // not Debian's layout
  }
  dirs.push(...(process.env.PATH ?? '').split(delimiter).filter(Boolean));
  return dirs.some((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/** What the tests need from Debian, with how to tell whether it is there. */
const TEST_PACKAGES = [
  { name: 'chromium', purpose: 'the console browser tests and the analytics.js compat case drive Chromium at /usr/bin/chromium', present: () => existsSync(CHROMIUM) },
  { name: 'postgresql', purpose: 'the delivery log is tested against a real PostgreSQL server (initdb, pg_ctl)', present: postgresServerFound },
];

/** How to run apt-get with root rights here: directly as root, through password-less sudo, or not at all. */
function asRoot() {
  if (process.getuid?.() === 0) return [];
  const sudo = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' });
  return sudo.status === 0 ? ['sudo', '-n'] : undefined;
}

function ensureTestPackages() {
  const missing = TEST_PACKAGES.filter((pkg) => !pkg.present());
  if (missing.length === 0) return;
  const names = missing.map((pkg) => pkg.name).join(' ');
  const fail = (why) => {
    console.error(
      `[tributary] the tests need Debian's ${names} (${missing.map((pkg) => pkg.purpose).join('; ')}), and ${why}.\n` +
        `Install them (apt-get install -y ${names}) and run again.`,
    );
    process.exit(1);
  };
  const prefix = asRoot();
  if (!prefix) fail('this is not root and sudo -n is not allowed');
  if (!existsSync('/usr/bin/apt-get')) fail('this machine has no apt-get');
  const run = (args) => {
    const [command, ...rest] = [...prefix, ...args];
    console.error(`[tributary] ${[command, ...rest].join(' ')}`);
    return spawnSync(command, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status;
  };
  console.error(`[tributary] installing Debian's ${names} for the tests`);
  if (run(['apt-get', 'update']) !== 0) fail('apt-get update failed');
  if (run(['apt-get', 'install', '-y', ...missing.map((pkg) => pkg.name)]) !== 0) fail('apt-get install failed');
  const still = missing.filter((pkg) => !pkg.present());
  if (still.length > 0) fail(`${still.map((pkg) => pkg.name).join(' ')} did not install what the tests look for`);
}

installDependencies();
if (process.argv.includes('--for-tests')) ensureTestPackages();
