/** User deletions and audience syncs: requests that become messages on the ingest topic. */
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { MAX_AUDIENCE_MEMBERS } from './audience-plan.js';
import { AdminError } from './errors.js';
import type { AdminRoutes } from './routes.js';

/** A JSON snapshot is parsed whole: room for its maximum of members with long ids. NDJSON is streamed, without a limit. */
const AUDIENCE_BODY_LIMIT = MAX_AUDIENCE_MEMBERS * 160;

const NDJSON = 'application/x-ndjson';

export const eventRoutes: AdminRoutes = (scope, { events }) => {
  scope.post('/deletions', async (request, reply) => reply.code(202).send(await events.deleteUser(request.body)));

  // The NDJSON body is handed over as the request stream, read line by line as it arrives.
  scope.addContentTypeParser(NDJSON, (_request, payload, done) => done(null, payload));

  scope.put<{ Params: { name: string }; Querystring: { sourceId?: string } }>('/audiences/:name/members', { bodyLimit: AUDIENCE_BODY_LIMIT }, async (request) => {
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
