/**
 * The delivery log through the admin API. The indexer owns the log's database (PostgreSQL, or
 * the embedded PGlite it runs in-process) and answers the read routes itself; ingest forwards
 * them so that clients — the CLI, the console — talk to one API with one token. The summaries
 * get the circuit state the dispatchers publish, which ingest already follows and the indexer
 * does not.
 *
 * The forwarded request carries ingest's own copy of the admin token (the caller's was checked
 * here already) and only the path and query string; the indexer's answer, error or not, is
 * passed back as it is — but for the indexer refusing ingest's token, which is a
 * misconfiguration rather than the caller's fault. An indexer that does not answer in time,
 * or at all, or refuses ingest, is a 503 `delivery_log_unavailable`: the rest of the admin
 * API keeps working without it.
 */
import { Agent, request } from 'undici';
import { z } from 'zod';
import { envTypes } from '@tributary/shared';
import { summarise, type DestinationHealthTable } from './destination-health.js';
import { AdminError } from './errors.js';
import type { AdminRoutes } from './routes.js';

export const deliveryLogEnv = {
  /** Base URL of the indexer's HTTP port, which serves the delivery log's read API. */
  DELIVERY_LOG_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://127.0.0.1:9104' }).default('http://127.0.0.1:9104'),
  /** Longest wait for the indexer's answer. */
  DELIVERY_LOG_TIMEOUT: envTypes.duration('10s'),
};

/** The admin paths the indexer answers (fastify route syntax). */
export const DELIVERY_LOG_ROUTES = ['/messages', '/messages/:messageId', '/attempts', '/delivery-summary', '/destinations/:id/summary', '/destinations/:id/timeline'] as const;

export interface ForwardedAnswer {
  status: number;
  body: unknown;
}

export class DeliveryLogUnavailable extends AdminError {
  constructor(reason: string) {
    super(503, 'delivery_log_unavailable', `the delivery log cannot answer right now (${reason}); deliveries are not affected — retry in a moment`);
  }
}

export class DeliveryLogClient {
  private readonly agent: Agent;
  private readonly base: URL;

  constructor(private readonly options: { url: string; token: string; timeoutMs: number }) {
    this.base = new URL(options.url);
    this.agent = new Agent({ connections: 16, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  }

  /** GETs `/admin/v1<pathAndQuery>` from the indexer. */
  async get(pathAndQuery: string): Promise<ForwardedAnswer> {
    const url = new URL(`/admin/v1${pathAndQuery}`, this.base);
    let response;
    try {
      response = await request(url, {
        method: 'GET',
        dispatcher: this.agent,
        headers: { authorization: `Bearer ${this.options.token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new DeliveryLogUnavailable(describe(error));
    }
    const text = await response.body.text().catch((error: unknown) => {
      throw new DeliveryLogUnavailable(describe(error));
    });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new DeliveryLogUnavailable(`the indexer answered ${response.statusCode} with a body that is not JSON`);
    }
    // The indexer's own 503s (its database away) keep their text; a 5xx without our shape gets ours.
    if (response.statusCode >= 500 && !isErrorBody(body)) throw new DeliveryLogUnavailable(`the indexer answered ${response.statusCode}`);
    // The caller's token passed here, so a refusal of ours is a misconfigured indexer, not a
    // wrong caller: passed on as it is, it would tell the caller to fix a token that is right.
    if (response.statusCode === 401) throw new DeliveryLogUnavailable("the indexer refused ingest's admin token: give it the same ADMIN_TOKEN as ingest");
    if (response.statusCode === 404 && (body as { code?: unknown }).code === 'admin_disabled') {
      throw new DeliveryLogUnavailable("the indexer's read API is off: set ADMIN_TOKEN on the indexer, the same as on ingest");
    }
    return { status: response.statusCode, body };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function isErrorBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string';
}

function describe(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'the indexer did not answer in time';
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'the indexer is not reachable';
  return error instanceof Error ? error.message : String(error);
}

type Summary = Record<string, unknown> & { destinationId?: unknown };

/** The circuit part of a summary: the state and backlog the dispatchers published (null when none has). */
export function withCircuit(summary: Summary, health: DestinationHealthTable, now: number): Summary {
  if (typeof summary.destinationId !== 'string') return summary;
  const views = health.views(summary.destinationId);
  if (views.length === 0) return { ...summary, circuit: null };
  const { state, backlog, updatedAt } = summarise(summary.destinationId, views, now);
  return { ...summary, circuit: { state, backlog, updatedAt } };
}

/**
 * Message ids that are dot segments: URL parsers resolve them (and their %2E spellings) as
 * "this folder" and "the folder above", so `/messages/..` became `/admin/v1/` on the way to
 * the indexer and answered 404 for a message ingest had accepted.
 */
const DOT_SEGMENTS = new Set(['.', '..']);

/**
 * What ingest asks the indexer for: the path and query exactly as received below the admin
 * prefix (ids forwarded still encoded), but for a message id that is a dot segment, which goes
 * as `/messages/by-id?messageId=…` — the indexer's form for ids no path can carry.
 */
export function forwardedPath(route: string, below: string, params: unknown): string {
  const messageId = (params as { messageId?: unknown } | undefined)?.messageId;
  if (route !== '/messages/:messageId' || typeof messageId !== 'string' || !DOT_SEGMENTS.has(messageId)) return below;
  const query = below.indexOf('?');
  return `/messages/by-id?messageId=${encodeURIComponent(messageId)}${query < 0 ? '' : `&${below.slice(query + 1)}`}`;
}

export function deliveryLogRoutes(client: DeliveryLogClient): AdminRoutes {
  return (scope, { health }) => {
    for (const path of DELIVERY_LOG_ROUTES) {
      scope.get(path, async (request, reply) => {
        const below = request.url.slice(request.url.indexOf('/admin/v1') + '/admin/v1'.length);
        const { status, body } = await client.get(forwardedPath(path, below, request.params));
        let answer = body;
        if (status === 200 && path === '/destinations/:id/summary') answer = withCircuit(body as Summary, health, Date.now());
        if (status === 200 && path === '/delivery-summary') {
          const all = body as { destinations?: Summary[] };
          const now = Date.now();
          answer = { ...all, destinations: (all.destinations ?? []).map((summary) => withCircuit(summary, health, now)) };
        }
        return reply.code(status).send(answer);
      });
    }
  };
}
