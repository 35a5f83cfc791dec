/**
 * The web console (clients/console, built by Vite into its dist/) served at /console/. The
 * files hold no data, so they are served without the admin token; every call the console
 * makes goes to the admin API, which needs it.
 *
 * - `/console` redirects to `/console/`, so the app's absolute asset URLs and its history
 *   routing see one base.
 * - Any other path under /console/ that is not a file is the app's own route (a reloaded
 *   `/console/messages/m-1`), answered with index.html; a missing file under assets/ stays a
 *   404, since a page asking for it wants a script, not HTML.
 * - Vite puts a content hash in every name under assets/, so those are cached for a year;
 *   index.html (which names the current hashes) and the rest are revalidated each time.
 * - Every answer carries a Content-Security-Policy that allows this origin only, with no
 *   inline script or style: the console shows data that senders control (message bodies,
 *   receivers' responses), and the policy is the second line behind Preact's escaping.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer, Logger } from '@tributary/shared';

export const CONSOLE_PREFIX = '/console';

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  // The console's forms are handled in the page; none is ever sent by the browser, so the
  // admin token typed into one can never end up in a URL.
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';
export const REVALIDATE_CACHE = 'no-cache';

/** clients/console/dist as installed beside ingest (a workspace link, or a copy in the image); undefined if the package is missing. */
export function consoleDistDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@tributary/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

export interface ConsoleOptions {
  logger: Logger;
  /** The built console; clients/console/dist by default. */
  root?: string | undefined;
}

function pathOf(request: FastifyRequest): string {
  const query = request.url.indexOf('?');
  return query === -1 ? request.url : request.url.slice(0, query);
}

function queryOf(request: FastifyRequest): string {
  const query = request.url.indexOf('?');
  return query === -1 ? '' : request.url.slice(query);
}

export function registerConsole(app: HttpServer, { logger, root = consoleDistDir() }: ConsoleOptions): void {
  const built = root !== undefined && existsSync(join(root, 'index.html'));
  if (built) logger.info({ path: `${CONSOLE_PREFIX}/` }, 'web console served');
  else logger.warn({ root }, 'web console not built: /console/ answers 503; run `npm run build` (it builds clients/console)');

  app.register(
    async (scope) => {
      scope.addHook('onRequest', async (_request, reply) => {
        reply.header('content-security-policy', CONSOLE_CSP);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
      });

      if (!built || root === undefined) {
        const notBuilt = async (_request: FastifyRequest, reply: FastifyReply) =>
          reply.code(503).send({ error: 'the web console is not built on this server: run `npm run build`, which builds clients/console', code: 'console_not_built' });
        scope.all('/', notBuilt);
        scope.all('/*', notBuilt);
        return;
      }

      const assets = join(root, 'assets') + sep;
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        index: false,
        wildcard: true,
        dotfiles: 'ignore',
        // Cache-Control is set here per file instead of by @fastify/send, which knows no hashes.
        cacheControl: false,
        setHeaders: (response, path) => response.setHeader('cache-control', path.startsWith(assets) ? HASHED_ASSET_CACHE : REVALIDATE_CACHE),
      });

      const sendIndex = (reply: FastifyReply) => reply.sendFile('index.html');

      scope.get('/', async (request, reply) => {
        // The server ignores trailing slashes, so this route answers both; only one is the app's base.
        if (pathOf(request) === CONSOLE_PREFIX) return reply.redirect(`${CONSOLE_PREFIX}/${queryOf(request)}`, 301);
        return sendIndex(reply);
      });

      scope.setNotFoundHandler(async (request, reply) => {
        const path = pathOf(request);
        const isAsset = path.startsWith(`${CONSOLE_PREFIX}/assets/`);
        if ((request.method === 'GET' || request.method === 'HEAD') && !isAsset) return sendIndex(reply);
        return reply.code(404).send({ error: `no console file ${request.method} ${path}`, code: 'not_found' });
      });
    },
    { prefix: CONSOLE_PREFIX },
  );
}
