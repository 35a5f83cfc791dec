/**
 * The indexer's throughput benchmark runs on its own (`npm run bench` in this workspace), not
 * in `npm test`: it measures instead of checking. It uses the integration tests' global
 * set-up to reach the real broker and registry.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['bench/throughput.ts'],
    globalSetup: [fileURLToPath(new URL('../../../test/harness/global-setup.ts', import.meta.url))],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
