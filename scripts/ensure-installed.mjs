#!/usr/bin/env node
// Makes `npm start` / `npm test` work on a fresh clone without a separate install step:
// runs `npm ci` (or `npm install` when there is no lockfile yet) when node_modules is
// missing or older than the lockfile. Plain Node, no dependencies, because it runs
// before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`Tributary needs Node >= 20.19; this is ${process.versions.node}.`);
  process.exit(1);
}

const upToDate =
  existsSync(marker) && existsSync(lockfile) && statSync(marker).mtimeMs >= statSync(lockfile).mtimeMs;
if (upToDate) process.exit(0);

const args = existsSync(lockfile) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
console.error(`[tributary] installing dependencies: npm ${args.join(' ')}`);
const result = spawnSync('npm', args, { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
