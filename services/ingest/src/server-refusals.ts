/**
 * The refusals the HTTP server makes before any route of ingest runs, answered in the Segment
 * API's error format (`{"success":false,"error","code","message"}`, api-error.ts) rather than
 * Node's bodiless ones or Fastify's `{"error":"Bad Request","message":"Client Error"}`:
 *
 * - bytes Node refuses (its `clientError`): headers or a body too slow (408), headers too large
 *   (431), anything that is not HTTP/1.1 (400);
 * - a request arriving while the server closes (503, with Retry-After, so a client retries
 *   against another replica or after the restart);
 * - a path no route and no API's own not-found handler serves (404);
 * - a path Fastify's router cannot read (broken percent-encoding: 400; a path parameter over
 *   its length limit: 414), refused before any scope's handlers run: in the admin API's error
 *   shape under /admin, the Segment API's everywhere else.
 *
 * Every Segment library reads the body of a refusal, and one that cannot (analytics-python
 * reads `message` and takes a KeyError for a reason to retry) retries a 4xx for minutes, its
 * queue held behind it; a refusal should also say what was wrong.
 *
 * The shared server (`createHttpServer`) is built without these, so they are fitted to the
 * instance ingest is given: Node's `clientError` and `request` listeners are the public places
 * where Node hands over a connection's refusal and each request, Fastify's own 404 is
 * answered from a hook before its handler runs, and its router's refusals through the shared
 * server's `setFrameworkErrorHandler`.
 */
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AdminError, setFrameworkErrorHandler, type AdminErrorBody, type HttpServer, type Logger } from '@tributary/shared';
import { echoed, errorBody, unavailable, type ApiError, type ErrorBody } from '@tributary/shared/segment';

export interface ClientTimeouts {
  requestMs: number;
  headersMs: number;
}

/** What Node hands the `clientError` listener: a socket error, often one of its HTTP parser's. */
export interface ClientError extends Error {
  code?: string;
  /** The parser's reason (`Invalid method encountered`), naming the rule broken, not the bytes. */
  reason?: unknown;
}

/**
 * Node's refusal of what arrived on a connection, as the API's error; undefined when nobody is
 * left to answer (the client reset the connection).
 */
export function clientErrorRefusal(error: ClientError, timeouts?: ClientTimeouts): ApiError | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT': {
      const limits = timeouts
        ? `: the headers must arrive within ${timeouts.headersMs} ms and the whole request within ${timeouts.requestMs} ms`
        : '';
      return { status: 408, code: 'request_timeout', error: `the request did not arrive in time${limits}; nothing in it was accepted, send it again` };
    }
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'headers_too_large',
        error: `the request headers are over ${maxHeaderSize} bytes; nothing in the request was accepted: send the write key and the messages in fewer header bytes`,
        details: { limit: maxHeaderSize },
      };
    default: {
      const reason = typeof error.reason === 'string' && error.reason !== '' ? ` (${error.reason})` : '';
      return { status: 400, code: 'malformed_request', error: `the request is not valid HTTP/1.1${reason}; nothing in it was accepted` };
    }
  }
}

/** The answer to a request that arrives while the server closes. */
export function closingRefusal(): ApiError {
  return unavailable('the service is shutting down; retry the request');
}

/** The answer to a path nothing on the server serves. */
export function noRouteRefusal(method: string, url: string): ApiError {
  return {
    status: 404,
    code: 'not_found',
    error: `no route ${method} ${echoed(url.split('?', 1)[0]!)}: the Segment API is POST /v1/batch, /v1/import, /v1/identify, /v1/track, /v1/page, /v1/screen, /v1/group or /v1/alias`,
  };
}

/** `/admin`, `/admin/…` (also `//admin/…`: the router ignores duplicate slashes). */
const ADMIN_PATH = /^\/+admin(?:[/?]|$)/;

/**
 * The answer to a request Fastify's router refused before routing it (its `frameworkErrors`):
 * the same refusal in the error shape of the API the path belongs to. The path is not quoted:
 * it is what could not be read.
 */
export function frameworkRefusal(error: { code?: string; statusCode?: number }, url: string): { status: number; body: AdminErrorBody | ErrorBody } {
  let refusal: ApiError;
  if (error.code === 'FST_ERR_BAD_URL') {
    refusal = {
      status: 400,
      code: 'invalid_url',
      error: 'the request path is not valid percent-encoding: every "%" must start a %XX escape (two hex digits) and the escapes must decode to UTF-8; nothing in the request was accepted',
    };
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    refusal = { status: 414, code: 'path_too_long', error: 'a segment of the request path is too long for any id; nothing in the request was accepted' };
  } else {
    // Fastify's remaining one (an async route constraint failing) would be a bug of ours.
    refusal = { status: 500, code: 'internal_error', error: 'the request failed inside the service; nothing in it was accepted' };
  }
  if (ADMIN_PATH.test(url)) {
    return { status: refusal.status, body: new AdminError(refusal.status, refusal.status === 500 ? 'internal' : refusal.code, refusal.error).body() };
  }
  return { status: refusal.status, body: errorBody(refusal) };
}

/**
 * A whole HTTP/1.1 response for a refusal written straight to a socket: a `clientError`
 * comes with no request or response object. The connection is closed after it.
 */
export function rawResponse(refusal: ApiError): string {
  const body = JSON.stringify(errorBody(refusal));
  const headers = {
    ...refusal.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\n${head}\r\n${body}`;
}

/** A response Node is writing on the socket, if any (Node's own `clientError` fallback checks the same). */
interface SocketWithResponse extends Socket {
  _httpMessage?: { headersSent?: boolean };
}

function answerClientError(socket: SocketWithResponse, refusal: ApiError | undefined): void {
  // Node's own rule: write only on a socket that can take it and on which no response has
  // begun (a 408 after half an answer would corrupt it for the client).
  if (refusal !== undefined && socket.writable && socket._httpMessage?.headersSent !== true) socket.write(rawResponse(refusal));
  socket.destroy();
}

function answerClosing(response: ServerResponse): void {
  const refusal = closingRefusal();
  const body = JSON.stringify(errorBody(refusal));
  response.writeHead(refusal.status, { ...refusal.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  response.end(body);
}

export interface ServerRefusals {
  /** Closes the server (Fastify's `close`), answering every request that still arrives with 503 and Retry-After. */
  close(): Promise<void>;
}

/** Fits the refusals to ingest's server; call before it is ready (it adds a hook). */
export function installServerRefusals(app: HttpServer, { logger, timeouts }: { logger: Logger; timeouts?: ClientTimeouts }): ServerRefusals {
  const server = app.server;

  server.removeAllListeners('clientError');
  server.on('clientError', (error: ClientError, socket: Socket) => {
    const refusal = clientErrorRefusal(error, timeouts);
    // Per connection only at debug: slow and broken clients are the network's weather.
    if (refusal !== undefined) logger.debug({ code: error.code, status: refusal.status }, 'refused what a client sent before it was a request');
    answerClientError(socket, refusal);
  });

  // Fastify's router answers requests that arrive while it closes with a 503 of its own
  // (`return503OnClosing`, set by the shared server), before any hook: ingest answers them
  // first, in the API's format and with Retry-After.
  let closing = false;
  const handlers = server.listeners('request') as Array<(request: IncomingMessage, response: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (closing) return answerClosing(response);
    for (const handler of handlers) handler.call(server, request, response);
  });

  setFrameworkErrorHandler(app, (error, request, reply) => {
    const { status, body } = frameworkRefusal(error, request.raw.url ?? '');
    logger.debug({ code: error.code, status }, 'refused a request path the router cannot read');
    void reply.code(status).send(body);
  });

  // The shared server's own not-found answer (outside /v1 and /admin, which answer theirs in
  // their own formats: their handlers belong to their scopes, not to this instance).
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 && request.server === app) {
      const refusal = noRouteRefusal(request.method, request.url);
      void reply.code(refusal.status).send(errorBody(refusal));
      return;
    }
    done();
  });

  return {
    close: async () => {
      closing = true;
      await app.close();
    },
  };
}
