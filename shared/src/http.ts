/**
 * The HTTP edge every service shares: a Fastify instance with /healthz (the process is
 * alive), /readyz (it has caught up and can do its work; 503 before that and while
 * shutting down) and /metrics. Ingest adds its API to the same instance; the other
 * services only serve these three routes. Fastify was chosen for routing, content-type
 * parsing and schema-backed validation that are fast and well kept.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

export interface Readiness {
  /** Named checks; the service is ready when every one is true. */
  set(name: string, ready: boolean): void;
  isReady(): boolean;
  snapshot(): Record<string, boolean>;
}

export function createReadiness(): Readiness {
  const checks = new Map<string, boolean>();
  return {
    set: (name, ready) => void checks.set(name, ready),
    isReady: () => checks.size > 0 && [...checks.values()].every(Boolean),
    snapshot: () => Object.fromEntries(checks),
  };
}

export interface HttpServerOptions {
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  /** Largest request body accepted, in bytes (Fastify rejects larger with 413). */
  bodyLimit?: number;
  /**
   * Client timeouts: a whole request (headers and body), its headers, an idle keep-alive
   * connection. A client trickling a body byte by byte is cut off after `requestMs`.
   */
  timeouts?: { requestMs: number; headersMs: number; keepAliveMs: number };
}

export type HttpServer = FastifyInstance<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>;

/**
 * Answers a request Fastify's router refuses before any route, hook or scope is chosen: a path
 * whose percent-encoding is broken (FST_ERR_BAD_URL), a path parameter over the length limit.
 */
export type FrameworkErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;

/**
 * Fastify takes its `frameworkErrors` handler only when the instance is built, and such
 * refusals reach no scope's error handler; a service that answers them in an API's own error
 * format (ingest) sets its handler here afterwards.
 */
const frameworkErrorHandlers = new WeakMap<HttpServer, FrameworkErrorHandler>();

export function setFrameworkErrorHandler(app: HttpServer, handler: FrameworkErrorHandler): void {
  frameworkErrorHandlers.set(app, handler);
}

/** Fastify's own answer to these refusals, for a server that set no handler of its own. */
function fastifyFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  void reply.code(status).send({ error: STATUS_CODES[status] ?? 'Bad Request', code: error.code, message: error.message, statusCode: status });
}

/** Characters of one path parameter: a 512-character id, percent-encoded (up to 3 bytes a character, 3 characters a byte). */
export const MAX_PATH_PARAM_LENGTH = 512 * 9;

export function createHttpServer({ logger, metrics, readiness, bodyLimit, timeouts }: HttpServerOptions): HttpServer {
  const app: HttpServer = Fastify({
    ...(timeouts ? { requestTimeout: timeouts.requestMs, keepAliveTimeout: timeouts.keepAliveMs } : {}),
    loggerInstance: logger.child({ component: 'http' }) as FastifyBaseLogger,
    // Per-request log lines would dominate the log at ingest rates; services log outcomes.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: bodyLimit ?? 1024 * 1024,
    // Client libraries build URLs by concatenation: analytics-java posts to /v1/import/, and an
    // endpoint configured with a trailing slash gives //v1/batch. Both mean the same route.
    // Path parameters are ids: config ids up to 128 characters, message and user ids up to 512,
    // more once percent-encoded. Fastify's default of 100 answered 414 for ids the API creates.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: MAX_PATH_PARAM_LENGTH },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors: (error, request, reply) => (frameworkErrorHandlers.get(app) ?? fastifyFrameworkError)(error, request, reply),
  });
  // Node checks request and header timeouts on this interval (30 s by default): too coarse
  // for a bound of a few seconds.
  if (timeouts) {
    app.server.headersTimeout = Math.min(timeouts.headersMs, timeouts.requestMs);
    app.server.requestTimeout = timeouts.requestMs;
    (app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(1_000, timeouts.headersMs);
  }
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `no route for ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' }),
  );
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ready = readiness.isReady();
    return reply.code(ready ? 200 : 503).send({ ready, checks: readiness.snapshot() });
  });
  app.get('/metrics', async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
  return app;
}

/** `host` is HTTP_HOST: all interfaces in a container, loopback for local runs and tests. */
export async function listen(app: HttpServer, port: number, host = '0.0.0.0'): Promise<string> {
  return app.listen({ port, host });
}
