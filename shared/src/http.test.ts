import { describe, expect, it } from 'vitest';
import { createHttpServer, createReadiness } from './http.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics.js';

describe('createHttpServer', () => {
  it('routes path parameters as long as the ids the APIs create, percent-encoded', async () => {
    const app = createHttpServer({ logger: createLogger({ service: 'http-test', level: 'silent' }), metrics: createMetrics('http-test'), readiness: createReadiness() });
    app.get('/things/:id', async (request) => ({ id: (request.params as { id: string }).id }));
    await app.ready();
    for (const id of ['s'.repeat(128), 'é'.repeat(512)]) {
      const response = await app.inject({ method: 'GET', url: `/things/${encodeURIComponent(id)}` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ id });
    }
    await app.close();
  });
});
