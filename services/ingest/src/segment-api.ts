/**
 * The Segment-compatible tracking API under /v1 on the service's Fastify instance:
 * POST /v1/batch (and /v1/import), /v1/identify, /v1/track, /v1/page, /v1/screen,
 * /v1/group and /v1/alias, and the short forms analytics.js posts to.
 *
 * Everything lives in one encapsulated plugin, so its body handling (raw bytes of any
 * content type, decided on by the handler), error and not-found answers and CORS
 * headers apply to /v1 only and leave the ops routes and the admin API as they are.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer } from '@tributary/shared';
import { echoed, errorBody, isApiError, type ApiError, type CallKind } from '@tributary/shared/segment';
import { clientAddress, type TrustedProxies } from './client-address.js';
import type { IngestMetrics } from './ingest-metrics.js';
import { MAX_RAW_BODY_BYTES } from './request-body.js';
import { createSegmentHandler, type SegmentHandlerDeps, type SegmentResponse } from './segment-handler.js';

export interface SegmentApiDeps extends SegmentHandlerDeps {
  metrics: IngestMetrics;
  /** Proxies trusted to have appended the client's address to X-Forwarded-For (INGEST_TRUST_PROXY); default none. */
  trustedProxies?: TrustedProxies;
}

const ENDPOINTS: ReadonlyArray<[path: string, kind: CallKind]> = [
  ['/batch', 'batch'],
  ['/import', 'batch'],
  ['/identify', 'identify'],
  ['/track', 'track'],
  ['/page', 'page'],
  ['/screen', 'screen'],
  ['/group', 'group'],
  ['/alias', 'alias'],
  // analytics.js (analytics-next) posts each call to `${apiHost}/` + the first letter of its
  // type, and batches to `/b` (its apiHost defaults to api.segment.io/v1), with the write key
  // in the body. Its older dispatchers never look at the answer, so a 404 here loses the event.
  ['/b', 'batch'],
  ['/i', 'identify'],
  ['/t', 'track'],
  ['/p', 'page'],
  ['/s', 'screen'],
  ['/g', 'group'],
  ['/a', 'alias'],
];

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  // X-Retry-Count: some versions of analytics.js's batching dispatcher count their retries in
  // it; a preflight that did not allow it would make the browser drop the request.
  'access-control-allow-headers': 'Authorization, Content-Type, Content-Encoding, X-Retry-Count',
};

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-max-age': '86400',
};

function reply(response: FastifyReply, { status, body, headers }: SegmentResponse): FastifyReply {
  if (headers) response.headers(headers);
  return response.code(status).send(body);
}

function refuse(response: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) response.headers(error.headers);
  return response.code(error.status).send(errorBody(error));
}

/**
 * One of the API's own errors, thrown rather than returned: a plain object of its shape (an
 * Error that happens to carry `status` and `code`, from a library, is not one).
 */
function isThrownApiError(error: unknown): error is ApiError {
  return !(error instanceof Error) && isApiError(error) && typeof error.status === 'number' && error.status >= 400 && error.status < 600 && typeof error.error === 'string';
}

/** Set by Node when the client closed the connection before its body was read whole. */
const ABORTED_BODY_CODES = new Set(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * The client's mistake behind an error that reached the scope's error handler — Fastify's own
 * refusals while reading the body (`FST_…` with a 4xx status), a body the client broke off,
 * or one of the API's errors thrown — or undefined for anything else: a bug of ours, which
 * must not be answered as the client's fault (a 4xx is dropped by every Segment library
 * without a retry), nor with its message, which may say anything about the service.
 */
export function clientMistake(error: FastifyError): ApiError | undefined {
  if (isThrownApiError(error)) return error;
  const { code, statusCode } = error;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return {
      status: 413,
      code: 'body_too_large',
      error: `the request body is over ${MAX_RAW_BODY_BYTES} bytes and was not read; the limit is 512000 bytes (500 KB) per request`,
      details: { limit: MAX_RAW_BODY_BYTES },
    };
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 415, code: 'unsupported_media_type', error: 'the Content-Type header is not a valid media type: send Content-Type: application/json' };
  }
  const clientStatus = typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500 ? statusCode : undefined;
  if (clientStatus === undefined) return undefined;
  // Fastify's messages are fixed sentences of its own (FST_ERR_CTP_INVALID_CONTENT_LENGTH:
  // "Request body size did not match Content-Length"), never the request's bytes.
  if (typeof code === 'string' && code.startsWith('FST_')) return { status: clientStatus, code: 'bad_request', error: `the request could not be read: ${echoed(error.message)}` };
  if (typeof code === 'string' && ABORTED_BODY_CODES.has(code)) {
    return { status: 400, code: 'request_aborted', error: 'the connection closed before the whole request body arrived; nothing in this request was accepted' };
  }
  return undefined;
}

export function registerSegmentApi(app: HttpServer, deps: SegmentApiDeps): void {
  const handle = createSegmentHandler(deps);
  const { metrics, logger, trustedProxies = 0 } = deps;

  void app.register(
    async (scope) => {
      // Bodies reach the handler as raw bytes whatever their Content-Type: the handler
      // decides on type, encoding and size, so every refusal has the same JSON shape.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_RAW_BODY_BYTES }, (_request, body, done) => done(null, body));

      scope.addHook('onRequest', async (_request, response) => {
        response.headers(CORS_HEADERS);
      });
      scope.addHook('onResponse', async (request, response) => {
        metrics.requests.inc({ route: request.routeOptions.url ?? 'unmatched', status: response.statusCode });
      });

      scope.setErrorHandler(async (error: FastifyError, request, response) => {
        const mistake = clientMistake(error);
        if (mistake !== undefined) return refuse(response, mistake);
        // The route and method only: the URL's query, the headers and the body may hold a
        // write key (the logger censors secret fields, not free text).
        logger.error({ err: error, method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'segment API request failed');
        return refuse(response, { status: 500, code: 'internal_error', error: 'the request failed inside the service; nothing in it was accepted, and the ingest log has the details' });
      });

      scope.setNotFoundHandler(async (request, response) =>
        refuse(response, {
          status: 404,
          code: 'not_found',
          error: `no endpoint ${request.method} ${echoed(request.url.split('?', 1)[0]!)}: use POST /v1/batch, /v1/import, /v1/identify, /v1/track, /v1/page, /v1/screen, /v1/group or /v1/alias`,
        }),
      );

      for (const [path, kind] of ENDPOINTS) {
        scope.post(path, async (request: FastifyRequest, response) =>
          reply(
            response,
            await handle({
              kind,
              authorization: request.headers.authorization,
              contentType: request.headers['content-type'],
              contentEncoding: request.headers['content-encoding'],
              body: Buffer.isBuffer(request.body) ? request.body : undefined,
              ip: clientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'], trustedProxies),
            }),
          ),
        );
        scope.options(path, async (_request, response) => response.code(204).headers(PREFLIGHT_HEADERS).send());
        // HEAD is answered from the GET route.
        scope.route({
          method: ['GET', 'PUT', 'PATCH', 'DELETE'],
          url: path,
          handler: async (request, response) => {
            response.header('allow', 'POST, OPTIONS');
            return refuse(response, {
              status: 405,
              code: 'method_not_allowed',
              error: `${request.method} is not allowed on /v1${path}: send the call with POST`,
            });
          },
        });
      }
    },
    { prefix: '/v1' },
  );
}
