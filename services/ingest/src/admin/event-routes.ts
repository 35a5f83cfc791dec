/** User deletions and audience syncs: requests that become messages on the ingest topic. */
import { MAX_AUDIENCE_MEMBERS } from './audience-plan.js';
import type { AdminRoutes } from './routes.js';

/** A full membership snapshot may be large: room for the maximum of members with long ids. */
const AUDIENCE_BODY_LIMIT = MAX_AUDIENCE_MEMBERS * 160;

export const eventRoutes: AdminRoutes = (scope, { events }) => {
  scope.post('/deletions', async (request, reply) => reply.code(202).send(await events.deleteUser(request.body)));

  scope.put<{ Params: { name: string } }>('/audiences/:name/members', { bodyLimit: AUDIENCE_BODY_LIMIT }, async (request) =>
    events.syncAudience(request.params.name, request.body),
  );
};
