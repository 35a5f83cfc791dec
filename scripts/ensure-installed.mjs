#!/usr/bin/env node
// Makes `npm start` / `npm test` work on a fresh clone without a separate install step:
// runs `npm ci` (or `npm install` when there is no lockfile yet) when node_modules is
// missing or older than the lockfile. With --for-tests (what `npm test` passes) it also makes
// sure Debian's Chromium is at /usr/bin/chromium, because the console's browser tests drive
// that one: the npm `playwright` package's own browser download cannot be reached from every
// machine the tests run on, and a browser test must fail rather than skip when it has none.
// Plain Node, no dependencies, because it runs before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_PACKAGE = 'chromium';

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

/** How to run apt-get with root rights here: directly as root, through password-less sudo, or not at all. */
function asRoot() {
  if (process.getuid?.() === 0) return [];
  const sudo = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' });
  return sudo.status === 0 ? ['sudo', '-n'] : undefined;
}

function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  const fail = (why) => {
    console.error(
      `[tributary] the browser tests need Chromium at ${CHROMIUM}, and ${why}.\n` +
        `Install Debian's "${CHROMIUM_PACKAGE}" package (apt-get install -y ${CHROMIUM_PACKAGE}) and run again.`,
    );
    process.exit(1);
  };
  const prefix = asRoot();
  if (!prefix) fail('this is not root and sudo -n is not allowed');
  if (!existsSync('/usr/bin/apt-get')) fail('this machine has no apt-get');
  const run = (args) => {
    const [command, ...rest] = [...prefix, ...args];
    return spawnSync(command, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status;
  };
  console.error(`[tributary] installing Debian's ${CHROMIUM_PACKAGE} for the browser tests`);
  if (run(['apt-get', 'update']) !== 0) fail('apt-get update failed');
  if (run(['apt-get', 'install', '-y', CHROMIUM_PACKAGE]) !== 0) fail(`apt-get install ${CHROMIUM_PACKAGE} failed`);
  if (!existsSync(CHROMIUM)) fail(`the ${CHROMIUM_PACKAGE} package did not install it there`);
}

installDependencies();
if (process.argv.includes('--for-tests')) ensureChromium();
