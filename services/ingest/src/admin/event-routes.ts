/** User deletions and audience syncs: requests that become messages on the ingest topic. */
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyError } from 'fastify';
import { MAX_ID_LENGTH } from '@tributary/shared';
import { MAX_AUDIENCE_MEMBERS } from './audience-plan.js';
import { AdminError } from './errors.js';
import type { AdminRoutes } from './routes.js';

/**
 * A JSON snapshot is parsed whole: room for its maximum of members with ids of the longest
 * length allowed (MAX_ID_LENGTH ASCII characters, each in quotes, after a comma, indented on
 * a line of its own), plus the object around them. 160 bytes a member was too little once ids
 * could be 512 characters: a valid snapshot was refused. NDJSON is streamed, without a limit.
 */
export const AUDIENCE_BODY_LIMIT = MAX_AUDIENCE_MEMBERS * (MAX_ID_LENGTH + 8) + 64 * 1024;

const NDJSON = 'application/x-ndjson';

export const eventRoutes: AdminRoutes = (scope, { events }) => {
  scope.post('/deletions', async (request, reply) => reply.code(202).send(await events.deleteUser(request.body)));

  // The NDJSON body is handed over as the request stream, read line by line as it arrives.
  scope.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));

  // Fastify's own 413 says only that the body is too large; this one says what to send instead.
  // Thrown, so the admin error handler answers it like every other error.
  const tooLarge = (error: FastifyError) => {
    if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
    throw new AdminError(
      413,
      'body_too_large',
      `a JSON audience snapshot may be at most ${AUDIENCE_BODY_LIMIT} bytes; send large snapshots as ${NDJSON} (one {"userId": …} per line, ?sourceId= in the URL, gzip optional), which is streamed without a size limit`,
    );
  };

  scope.put<{ Params: { name: string }; Querystring: { sourceId?: string } }>('/audiences/:name/members', { bodyLimit: AUDIENCE_BODY_LIMIT, errorHandler: tooLarge }, async (request) => {
    const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type !== NDJSON) return events.syncAudience(request.params.name, request.body);
    const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      throw new AdminError(415, 'unsupported_content_encoding', `Content-Encoding ${JSON.stringify(encoding)} is not supported: send NDJSON uncompressed or gzip`);
    }
    const stream = request.body as Readable;
    return events.syncAudienceStream(request.params.name, request.query.sourceId, encoding === 'gzip' ? stream.pipe(createGunzip()) : stream);
  });
};
