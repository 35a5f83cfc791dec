/**
 * Mounts the admin API on the ingest HTTP server under /admin/v1 — or, without an
 * ADMIN_TOKEN, a JSON 404 saying it is off. Every route but the OpenAPI document needs
 * the bearer token; every error answer has the admin error shape.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerRefusal, checkBearer, type HttpServer, type Logger } from '@tributary/shared';
import { configRoutes } from './config-routes.js';
import { dlqRoutes } from './dlq.js';
import { AdminError, toAdminError } from './errors.js';
import { eventRoutes } from './event-routes.js';
import { healthRoutes } from './health-routes.js';
import { quarantineRoutes } from './quarantine.js';
import type { OpenApiDocument } from './openapi.js';
import { ADMIN_PREFIX, type AdminDeps, type AdminRoutes } from './routes.js';

/** Every route group; a new group is one more entry. */
export const ADMIN_ROUTES: readonly AdminRoutes[] = [configRoutes, eventRoutes, dlqRoutes, healthRoutes, quarantineRoutes];

export interface AdminApiOptions extends AdminDeps {
  logger: Logger;
  openapi: OpenApiDocument;
  /** Route groups to mount; all of them unless a test narrows it. */
  routes?: readonly AdminRoutes[];
}

export function registerAdminApi(app: HttpServer, options: AdminApiOptions): void {
  const { logger, openapi, routes = ADMIN_ROUTES, ...deps } = options;
  app.register(
    async (scope) => {
      scope.setErrorHandler(async (error, request, reply) => {
        const known = toAdminError(error);
        if (known) return reply.code(known.status).send(known.body());
        logger.error({ err: error, method: request.method, route: request.routeOptions.url }, 'admin request failed');
        return reply.code(500).send({ error: 'internal error; the ingest log has the details', code: 'internal', issues: [] });
      });
      scope.setNotFoundHandler(async (request, reply) =>
        reply.code(404).send(new AdminError(404, 'not_found', `no admin route ${request.method} ${request.url.split('?')[0]}; see ${ADMIN_PREFIX}/openapi.json`).body()),
      );

      // The API description holds nothing secret; tools fetch it without a token.
      scope.get('/openapi.json', async () => openapi);

      await scope.register(async (secured) => {
        secured.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
          const check = checkBearer(request.headers.authorization, deps.token);
          if (!check.ok) {
            const { error, challenge } = bearerRefusal(check.reason);
            return reply.code(401).header('www-authenticate', challenge).send(error.body());
          }
          if (!deps.isReady()) {
            return reply.code(503).header('retry-after', '1').send(new AdminError(503, 'not_ready', 'the admin API is starting; retry in a moment').body());
          }
          return undefined;
        });
        for (const group of routes) group(secured, deps);
      });
    },
    { prefix: ADMIN_PREFIX },
  );
}

/** Without ADMIN_TOKEN: every /admin URL says the API is off rather than that it does not exist. */
export function registerAdminDisabled(app: HttpServer): void {
  const disabled = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send(new AdminError(404, 'admin_disabled', 'the admin API is disabled: set ADMIN_TOKEN on the ingest service to enable it').body());
  app.all('/admin', disabled);
  app.all('/admin/*', disabled);
}
