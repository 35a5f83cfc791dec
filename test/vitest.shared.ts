/**
 * The vitest set-up every workspace uses: two projects, `unit` (`*.test.ts`, pure logic,
 * no Kafka) and `integration` (`*.it.test.ts`, against a real broker, registry and HTTP
 * receivers). Only the integration project has the global set-up that acquires the
 * stack, and vitest runs a project's global set-up only when that project has tests to
 * run, so running one unit file never starts Kafka.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

const globalSetup = fileURLToPath(new URL('./harness/global-setup.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Where this workspace's results go as JSON, for scripts/test-failures.mjs to list what failed
 * at the end of `npm test`: named after the package whose directory vitest runs in (or below:
 * `npx vitest run` is also started from a workspace's subdirectory).
 */
function resultsFile(): string {
  let dir = process.cwd();
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const manifest = join(dir, 'package.json');
  const name = existsSync(manifest) ? ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name ?? 'unnamed') : 'unnamed';
  return join(REPO_ROOT, '.tributary', 'test-results', `${name.replace('/', '+')}.json`);
}

export function tributaryVitestConfig(options: { integrationTimeoutMs?: number } = {}): ViteUserConfig {
  return defineConfig({
    test: {
      reporters: ['default', 'json'],
      outputFile: { json: resultsFile() },
      projects: [
        {
          extends: true,
          test: {
            name: 'unit',
            include: ['**/*.test.ts'],
            exclude: ['**/*.it.test.ts', '**/node_modules/**', '**/dist/**'],
          },
        },
        {
          extends: true,
          test: {
            name: 'integration',
            include: ['**/*.it.test.ts'],
            exclude: ['**/node_modules/**', '**/dist/**'],
            globalSetup: [globalSetup],
            testTimeout: options.integrationTimeoutMs ?? 60_000,
            hookTimeout: 120_000,
            // Integration files share one broker on a 2-core machine; running them one at
            // a time keeps timings meaningful and failures readable.
            fileParallelism: false,
          },
        },
      ],
    },
  });
}
