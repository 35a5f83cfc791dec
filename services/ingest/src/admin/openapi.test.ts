import { compileErrors, validate } from '@readme/openapi-parser';
import Fastify, { type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger, MAX_WEBHOOKS, type DeadLetterStore, type HttpServer } from '@tributary/shared';
import { MAX_AUDIENCE_MEMBERS } from './audience-plan.js';
import { DELIVERY_LOG_ROUTES, deliveryLogRoutes, type DeliveryLogClient } from './delivery-log.js';
import { AdminDeadLetters, listQuery } from './dlq.js';
import { loadAdminOpenApi } from './openapi.js';
import { ADMIN_ROUTES, registerAdminApi } from './plugin.js';
import { ADMIN_PREFIX } from './routes.js';
import { testAdminDeps, unreached } from './test-deps.js';

async function registeredRoutes(): Promise<string[]> {
  const app = Fastify();
  const routes: string[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
    }
  });
  registerAdminApi(app as unknown as HttpServer, {
    ...testAdminDeps({ token: 't' }),
    logger: createLogger({ service: 'test', level: 'silent' }),
    openapi: loadAdminOpenApi(),
    // As index.ts mounts them: the plugin's groups and the routes forwarded to the delivery log.
    routes: [...ADMIN_ROUTES, deliveryLogRoutes(unreached<DeliveryLogClient>())],
  });
  await app.ready();
  await app.close();
  return routes;
}

describe('the admin OpenAPI document', () => {
  const document = loadAdminOpenApi();

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('documents exactly the routes the plugin registers', async () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key))
        .map((method) => `${method.toUpperCase()} ${ADMIN_PREFIX}${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    const registered = await registeredRoutes();
    expect(registered.length).toBeGreaterThan(10);
    expect(new Set(registered)).toEqual(new Set(documented));
  });

  it('documents every delivery-log route with its errors in the admin error shape', () => {
    const paths = document.paths as Record<string, { get?: { responses: Record<string, { $ref?: string }> } }>;
    for (const route of DELIVERY_LOG_ROUTES) {
      const path = route.replace(/:(\w+)/g, '{$1}');
      const responses = paths[path]?.get?.responses;
      expect(responses, path).toBeDefined();
      expect(Object.keys(responses!), path).toEqual(expect.arrayContaining(['200', '400', '401', '503']));
      expect(responses!['503']!.$ref, path).toBe('#/components/responses/DeliveryLogUnavailable');
      expect(responses!['400']!.$ref, path).toBe('#/components/responses/QueryInvalid');
      // A route that looks something up by id can also not find it.
      if (path.includes('{')) expect(responses!['404']!.$ref, path).toBe('#/components/responses/NotFound');
    }
  });

  it('documents every dead-letter query parameter, and every field of the answer, paging included', async () => {
    const { components, paths } = document as unknown as {
      components: { parameters: Record<string, { name: string }>; schemas: Record<string, { required: string[]; properties: Record<string, unknown> }> };
      paths: Record<string, { get: { parameters: Array<{ name?: string; $ref?: string }> } }>;
    };
    const named = paths['/dlq']!.get.parameters.map((parameter) => parameter.name ?? components.parameters[parameter.$ref!.split('/').at(-1)!]!.name);
    expect(named.sort()).toEqual(Object.keys(listQuery.shape).sort());
    expect(named).toContain('before');

    const store = { list: () => Promise.resolve({ deadLetters: [], matched: 0, next: undefined }) } as unknown as DeadLetterStore;
    const answer = await new AdminDeadLetters({ store, config: { destination: () => undefined }, timeoutMs: 1_000 }).list({});
    const schema = components.schemas.DeadLetterList!;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(answer).sort());
    expect(schema.required.sort()).toEqual(Object.keys(answer).sort());
  });

  it('states the limits the code enforces', () => {
    const schemas = (document.components as { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> }).schemas;
    const settings = schemas.DestinationInput!.properties.settings as { properties: { webhooks: { maxItems: number } } };
    expect(settings.properties.webhooks.maxItems).toBe(MAX_WEBHOOKS);
    expect(schemas.AudienceSyncRequest!.properties.userIds!.maxItems).toBe(MAX_AUDIENCE_MEMBERS);
  });
});
