import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, MAX_ID_LENGTH, type HttpServer } from '@tributary/shared';
import { MAX_AUDIENCE_MEMBERS } from './audience-plan.js';
import { AUDIENCE_BODY_LIMIT, eventRoutes } from './event-routes.js';
import type { AdminEvents, AudienceSyncOutcome } from './events.js';
import { loadAdminOpenApi } from './openapi.js';
import { registerAdminApi } from './plugin.js';
import { ADMIN_PREFIX } from './routes.js';
import { testAdminDeps } from './test-deps.js';

// What the route handed to the sync: only that it got there (and how big it was) matters here.
const synced: Array<{ name: string; members: number }> = [];
const events = {
  syncAudience: (name: string, body: { userIds: string[] }) => {
    synced.push({ name, members: body.userIds.length });
    return Promise.resolve({ audience: name } as AudienceSyncOutcome);
  },
} as unknown as AdminEvents;

const app = Fastify();

beforeAll(async () => {
  registerAdminApi(app as unknown as HttpServer, {
    ...testAdminDeps({ token: 't', events }),
    logger: createLogger({ service: 'test', level: 'silent' }),
    openapi: loadAdminOpenApi(),
    routes: [eventRoutes],
  });
  await app.ready();
});
afterAll(() => app.close());

const put = (payload: string) =>
  app.inject({ method: 'PUT', url: `${ADMIN_PREFIX}/audiences/High%20Value/members`, headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, payload });

describe('PUT /audiences/:name/members with a JSON snapshot', () => {
  it('takes the most members a JSON snapshot may have, each with an id of the longest length allowed, pretty-printed', async () => {
    const userIds = Array.from({ length: MAX_AUDIENCE_MEMBERS }, (_, index) => String(index).padStart(MAX_ID_LENGTH, 'u'));
    const response = await put(JSON.stringify({ sourceId: 'web', userIds }, null, 2));
    expect(response.statusCode).toBe(200);
    expect(synced).toEqual([{ name: 'High Value', members: MAX_AUDIENCE_MEMBERS }]);
  });

  it('answers a larger body 413 in the admin error shape, saying to send NDJSON', async () => {
    const response = await put(`{"sourceId": "web", "userIds": []}${' '.repeat(AUDIENCE_BODY_LIMIT)}`);
    expect(response.statusCode).toBe(413);
    const body = response.json<{ error: string; code: string; issues: unknown[] }>();
    expect(body).toMatchObject({ code: 'body_too_large', issues: [] });
    expect(body.error).toBe(
      `a JSON audience snapshot may be at most ${AUDIENCE_BODY_LIMIT} bytes; send large snapshots as application/x-ndjson (one {"userId": …} per line, ?sourceId= in the URL, gzip optional), which is streamed without a size limit`,
    );
  });

  it('still answers other errors through the admin error handler', async () => {
    const response = await put('{"sourceId": ');
    expect([response.statusCode, response.json<{ code: string }>().code]).toEqual([400, 'invalid_json']);
  });
});
