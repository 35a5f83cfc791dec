import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // As every other workspace (test/vitest.shared.ts, which this package cannot import: the
    // test package depends on it): results as JSON for scripts/test-failures.mjs.
    reporters: ['default', 'json'],
    outputFile: { json: fileURLToPath(new URL('../.tributary/test-results/@tributary+deploy.json', import.meta.url)) },
    include: [
      'local/**/*.test.ts',
      'docker/**/*.test.ts',
      'helm/**/*.test.ts',
      'prometheus/**/*.test.ts',
      'grafana/**/*.test.ts',
      'observability/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    // The integration test may have to download and boot two JVMs on a cold cache. (The helm
    // and promtool builds of the chart and rules tests set their own, longer hook timeouts.)
    hookTimeout: 300_000,
    testTimeout: 120_000,
  },
});
