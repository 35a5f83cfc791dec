import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['local/**/*.test.ts'],
    // The integration test may have to download and boot two JVMs on a cold cache.
    hookTimeout: 300_000,
    testTimeout: 120_000,
  },
});
