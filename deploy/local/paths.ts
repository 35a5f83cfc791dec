import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where downloads and installed JVM distributions live. Outside the repo on purpose: a
 * `git clean` or a fresh clone must not cost another 150 MB download.
 */
export function resolveCacheDir(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const explicit = env['TRIBUTARY_CACHE_DIR'];
  if (explicit) return resolve(explicit);
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg ? resolve(xdg) : join(home, '.cache'), 'tributary');
}

/**
 * The deploy/ directory, found from a module's own location. Walking up instead of a fixed
 * `../..` lets the same code run from local/*.ts (vitest) and dist/local/*.js (node).
 */
export function findDeployRoot(fromDir: string, exists: (p: string) => boolean = existsSync): string {
  let dir = resolve(fromDir);
  for (;;) {
    if (exists(join(dir, 'local', 'pom.xml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find deploy/local/pom.xml above ${fromDir}`);
    dir = parent;
  }
}

export const deployRoot: string = findDeployRoot(dirname(fileURLToPath(import.meta.url)));
export const repoRoot: string = dirname(deployRoot);
export const pomPath: string = join(deployRoot, 'local', 'pom.xml');

/** The persistent stack of `npm start` / `npm run stack -- up`. */
export const localDataDir: string = join(repoRoot, '.tributary', 'data');
export const localLogDir: string = join(repoRoot, '.tributary', 'logs');
