import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
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
