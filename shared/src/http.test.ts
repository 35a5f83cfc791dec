import { describe, expect, it } from 'vitest';
import { createHttpServer, createReadiness, setFrameworkErrorHandler } from './http.js';
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

  it('answers a path the router cannot read as Fastify does, or with the handler a service sets', async () => {
    const app = createHttpServer({ logger: createLogger({ service: 'http-test', level: 'silent' }), metrics: createMetrics('http-test-bad-url'), readiness: createReadiness() });
    app.get('/things/:id', async () => ({}));
    await app.ready();
    const fastifys = await app.inject({ method: 'GET', url: '/things/%E0%A4%A' });
    expect(fastifys.statusCode).toBe(400);
    expect(fastifys.json()).toMatchObject({ error: 'Bad Request', code: 'FST_ERR_BAD_URL', statusCode: 400 });

    setFrameworkErrorHandler(app, (error, request, reply) => void reply.code(418).send({ own: error.code, url: request.url }));
    const own = await app.inject({ method: 'GET', url: '/things/%E0%A4%A' });
    expect(own.statusCode).toBe(418);
    expect(own.json()).toEqual({ own: 'FST_ERR_BAD_URL', url: '/things/%E0%A4%A' });
    await app.close();
  });
});
