/**
 * The delivery log's read API on the indexer's HTTP port, under the admin API's paths and
 * behind its token, answering in its error shape (ingest forwards these routes here). Without
 * ADMIN_TOKEN every /admin URL answers 404 `admin_disabled`. A query the database cannot
 * answer (down, starting, too slow) is a 503 `delivery_log_unavailable`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, bearerRefusal, checkBearer, type HttpServer, type Logger } from '@tributary/shared';
import type { DeliveryLogStore } from '../store/store.js';
import { DEFAULT_RETENTION_MS, parseAttemptSearch, parseId, parseMessageLookup, parseRange, parseTail, parseTimeline } from './params.js';

export const ADMIN_PREFIX = '/admin/v1';

export interface ReadApiOptions {
  token: string | undefined;
  /** The store once the database is open; undefined while the indexer starts. */
  store(): DeliveryLogStore | undefined;
  /** Ids of the configured destinations, for the delivery summary. */
  destinationIds(): string[];
  /** DELIVERY_LOG_RETENTION: ranges are read from no earlier than now minus this (DEFAULT_RETENTION_MS when not given). */
  retentionMs?: number;
  logger: Logger;
}

function unavailable(detail: string): AdminError {
  return new AdminError(503, 'delivery_log_unavailable', `the delivery log cannot answer now (${detail}); retry in a moment`);
}

export function registerReadApi(app: HttpServer, options: ReadApiOptions): void {
  const { token, logger, retentionMs = DEFAULT_RETENTION_MS } = options;
  if (token === undefined) {
    const disabled = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.code(404).send(new AdminError(404, 'admin_disabled', 'the admin API is disabled: set ADMIN_TOKEN on the indexer (the same as on ingest) to enable it').body());
    app.all('/admin', disabled);
    app.all('/admin/*', disabled);
    return;
  }
  const store = (): DeliveryLogStore => {
    const current = options.store();
    if (!current) throw unavailable('the database is not open yet');
    return current;
  };

  app.register(
    async (scope) => {
      scope.setErrorHandler(async (error, request, reply) => {
        if (error instanceof AdminError) return reply.code(error.status).send(error.body());
        const { statusCode } = error as { statusCode?: unknown };
        if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
          return reply.code(statusCode).send(new AdminError(statusCode, 'bad_request', error instanceof Error ? error.message : 'bad request').body());
        }
        // A value the checks let through but the database refuses as data (SQLSTATE class 22:
        // out of range, invalid text) is the request's fault, not the database's.
        if (isDataException(error)) {
          return reply.code(400).send(new AdminError(400, 'bad_request', 'a query parameter is out of the range the delivery log can search').body());
        }
        // The queries are read-only and checked: what fails here is the database.
        logger.warn({ err: error, method: request.method, route: request.routeOptions.url }, 'delivery log query failed');
        return reply.code(503).header('retry-after', '1').send(unavailable('its database did not answer').body());
      });
      scope.setNotFoundHandler(async (request, reply) =>
        reply.code(404).send(new AdminError(404, 'not_found', `no delivery log route ${request.method} ${request.url.split('?')[0]}`).body()),
      );
      scope.addHook('onRequest', async (request, reply) => {
        const check = checkBearer(request.headers.authorization, token);
        if (check.ok) return undefined;
        const { error, challenge } = bearerRefusal(check.reason);
        return reply.code(401).header('www-authenticate', challenge).send(error.body());
      });

      scope.get<{ Params: { messageId: string } }>('/messages/:messageId', async (request) => {
        const messageId = parseMessageLookup(request.params.messageId, request.query);
        const answer = await store().message(messageId);
        if (!answer) throw new AdminError(404, 'not_found', `message "${messageId}" is not in the delivery log (not indexed yet, or past retention)`);
        return answer;
      });
      scope.get('/attempts', async (request) => store().attempts(parseAttemptSearch(request.query, Date.now(), retentionMs)));
      scope.get('/messages', async (request) => store().tail(parseTail(request.query)));
      scope.get('/delivery-summary', async (request) => {
        const range = parseRange(request.query, Date.now(), retentionMs);
        const destinations = await store().summaries([...options.destinationIds()].sort(), range);
        return { since: new Date(range.since).toISOString(), until: new Date(range.until).toISOString(), destinations };
      });
      scope.get<{ Params: { destinationId: string } }>('/destinations/:destinationId/summary', async (request) => {
        const destinationId = await knownDestination(request.params.destinationId);
        return store().summary(destinationId, parseRange(request.query, Date.now(), retentionMs));
      });
      scope.get<{ Params: { destinationId: string } }>('/destinations/:destinationId/timeline', async (request) => {
        const destinationId = await knownDestination(request.params.destinationId);
        return store().timeline(destinationId, parseTimeline(request.query, Date.now(), retentionMs));
      });
    },
    { prefix: ADMIN_PREFIX },
  );

  /** Configured, or seen in the log (a deleted destination's history stays readable). */
  async function knownDestination(raw: string): Promise<string> {
    const destinationId = parseId('destinationId', raw);
    if (options.destinationIds().includes(destinationId) || (await store().destinationSeen(destinationId))) return destinationId;
    throw new AdminError(404, 'not_found', `destination "${destinationId}" is neither configured nor in the delivery log`);
  }
}

/** PostgreSQL's class 22, data exception (node-postgres and PGlite both give the SQLSTATE as `code`). */
function isDataException(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}
