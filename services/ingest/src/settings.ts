/** The ingest service's settings beyond `commonEnv`; each is documented in the README. */
import { z } from 'zod';
import { envTypes } from '@tributary/shared';
import { parseTrustProxy } from './client-address.js';

export const ingestEnv = {
  /** Port of the Segment API, the admin API and the ops routes. */
  INGEST_PORT: envTypes.port(8080),
  /** Longest a request waits for Kafka to acknowledge its records before a 503. */
  INGEST_PRODUCE_TIMEOUT: envTypes.duration('10s'),
  /** Records per Kafka transaction; requests queued beyond it wait for the next one. */
  INGEST_MAX_TRANSACTION_RECORDS: envTypes.positiveInt(5000),
  /**
   * Bytes of encoded records per Kafka transaction (1 MB). A request waits for the transaction
   * in flight and then rides in the next one: at 4 MB, under a flood of large batches, that was
   * two ~160 ms transactions for another source's one-event request; small events never fill one.
   */
  INGEST_MAX_TRANSACTION_BYTES: envTypes.positiveInt(1_000_000),
  /** Bytes of records waiting for Kafka or in a transaction; beyond it requests get 503 at once. */
  INGEST_MAX_BYTES_IN_FLIGHT: envTypes.positiveInt(32 * 1024 * 1024),
  /**
   * Messages a second each source may write to the main ingest topic; what it sends beyond
   * that goes to the overflow lane, which the router reads after the main one (0: no lane).
   */
  INGEST_SOURCE_RATE: envTypes.nonNegativeInt(500),
  /** Longest a client may take to send a whole request (headers and body): slow-trickle clients are cut off. */
  INGEST_REQUEST_TIMEOUT: envTypes.duration('30s'),
  /** Longest a client may take to send the request headers. */
  INGEST_HEADERS_TIMEOUT: envTypes.duration('10s'),
  /** How long an idle keep-alive connection stays open (above common load balancers' 60 s). */
  INGEST_KEEP_ALIVE_TIMEOUT: envTypes.duration('65s'),
  /**
   * Proxies in front of ingest trusted to have appended the client's address to
   * X-Forwarded-For, which is then stored as `context.ip` (client-address.ts): `false` (the
   * socket's peer), a hop count, or `true` (every hop: the header's first address).
   */
  INGEST_TRUST_PROXY: z
    .string()
    .transform((text, ctx) => {
      const trusted = parseTrustProxy(text);
      if (trusted === undefined) ctx.addIssue({ code: 'custom', message: 'must be true, false or a number of proxies (e.g. 1 behind one load balancer)' });
      return trusted ?? 0;
    })
    .prefault('false'),
};
