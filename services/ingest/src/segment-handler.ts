/**
 * One Segment API call from headers and body bytes to its answer, without HTTP or Kafka:
 * check encoding and content type, authenticate, decompress within the limit, parse the
 * JSON once, validate every message, normalise and Avro-encode each once, then wait for
 * the transaction that carries the records. `200 {"success":true}` is answered only
 * after that transaction committed; any refusal happens before a record is produced,
 * so nothing of a refused request reaches Kafka.
 */
import { randomUUID } from 'node:crypto';
import type { IngestMessage, Source } from '@tributary/schemas';
import { BatcherClosedError, BatcherFullError, ProduceTimeoutError, shareUnits, type IngestLane, type Logger, type ProduceRecord } from '@tributary/shared';
import {
  authenticate,
  credentialsFromHeader,
  errorBody,
  isApiError,
  missingCredentials,
  parseJsonBody,
  prepareCall,
  unavailable,
  writeKeyFromBody,
  type ApiError,
  type CallKind,
  type ErrorBody,
} from '@tributary/shared/segment';
import type { IngestMetrics } from './ingest-metrics.js';
import { checkContentType, contentEncoding, decodeBody } from './request-body.js';
import { writeKeyHint } from './write-key-hint.js';

export interface SegmentCall {
  kind: CallKind;
  authorization: string | undefined;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** Raw body bytes as read from the socket; undefined when the request had none. */
  body: Buffer | undefined;
  /** The client's address (client-address.ts), stored as `context.ip` when the client sent none. */
  ip?: string;
}

export interface SegmentResponse {
  status: number;
  body: { success: true } | ErrorBody;
  headers?: Record<string, string>;
}

export interface SegmentHandlerDeps {
  sourceByWriteKey(writeKey: string): Source | undefined;
  /** Avro-encodes one record for the lane's ingest topic; throws if the value does not fit the schema. */
  encode(message: IngestMessage, lane: IngestLane): { topic: string; value: Buffer };
  /** The lane of a request taking `units` of the source's share (shared source-lanes.ts); default main. */
  laneFor?(sourceId: string, units: number, now: number): IngestLane;
  /** A main-lane request was not accepted after all: the source's share it took is given back. */
  giveBack?(sourceId: string, units: number): void;
  /** The source's enabled destinations: each message of it is delivered that many times. Default 1. */
  destinationCount?(sourceId: string): number;
  /** Resolves once the records are committed to Kafka; sources take turns at the transactions (produce-batcher.ts). */
  submit(records: ProduceRecord[], sourceId: string): Promise<void>;
  /** False until the configuration is loaded and the producer connected, and again while stopping. */
  isReady(): boolean;
  /**
   * True while the bytes waiting for Kafka are at their bound for a request of this source
   * (unset: a source not known before its body is parsed): requests are refused before any
   * work. A source holding little of them may go a little past it (produce-batcher.ts).
   */
  isOverloaded(sourceId?: string): boolean;
  logger: Logger;
  metrics: Pick<IngestMetrics, 'messages' | 'batchSize' | 'overflowMessages'>;
  now?: () => number;
  newMessageId?: () => string;
  /** Runs a request's CPU-heavy part in its source's turn (fair-turns.ts); default: at once. */
  inTurn?<T>(sourceKey: string, work: () => T): Promise<T>;
}

const EMPTY = Buffer.alloc(0);

/** The turn of requests whose body names no known write key before it is parsed (write-key-hint.ts). */
const NO_KNOWN_WRITE_KEY = '';

type EncodedCall =
  | { ok: false; response: SegmentResponse }
  | { ok: true; source: Source; units: number; lane: IngestLane; records: ProduceRecord[]; perType: Map<string, number> };

/** Kafka is behind: the bytes waiting for it are at INGEST_MAX_BYTES_IN_FLIGHT. */
function overloaded(): ApiError {
  return { ...unavailable('too many messages are waiting for Kafka right now; retry the request shortly'), headers: { 'retry-after': '1' } };
}
const SUCCESS: SegmentResponse = { status: 200, body: { success: true } };

function refuse(error: ApiError): SegmentResponse {
  const response: SegmentResponse = { status: error.status, body: errorBody(error) };
  if (error.headers) response.headers = error.headers;
  return response;
}

export function createSegmentHandler(deps: SegmentHandlerDeps): (call: SegmentCall) => Promise<SegmentResponse> {
  const now = deps.now ?? Date.now;
  const newMessageId = deps.newMessageId ?? randomUUID;

  const inTurn = deps.inTurn ?? (<T>(_key: string, work: () => T) => Promise.resolve(work()));

  /**
   * Parse, authenticate by the body's write key if need be, validate, normalise and encode:
   * synchronous, run in a turn. `noKeyProblem` is the 401's sentence when the body has no key
   * either (it names the header that did not authenticate, if one came).
   */
  function encodeCall(call: SegmentCall, decoded: Buffer, headerSource: Source | undefined, noKeyProblem: string | undefined, receivedAt: number): EncodedCall {
    const parsed = parseJsonBody(decoded);
    if (!parsed.ok) return { ok: false, response: refuse(parsed.error) };

    let source = headerSource;
    if (source === undefined) {
      const writeKey = writeKeyFromBody(parsed.value);
      if (writeKey === undefined) return { ok: false, response: refuse(missingCredentials(noKeyProblem)) };
      const auth = authenticate(writeKey, deps.sourceByWriteKey);
      if (!auth.ok) return { ok: false, response: refuse(auth.error) };
      source = auth.source;
    }

    // A body the parse found shallow cannot hold a field the router would refuse as too deep,
    // so its records skip that check (a scan of each record's free-form text).
    const receipt = { sourceId: source.id, receivedAt, newMessageId, ...(call.ip === undefined ? {} : { ip: call.ip }) };
    const prepared = prepareCall(parsed.value, call.kind, receipt, { fieldsWithinDepth: parsed.fieldsWithinDepth });
    if (!prepared.ok) return { ok: false, response: refuse(prepared.error) };

    const { messages } = prepared;
    // Charged on what is written, not only on what came: a batch's context is copied into each
    // of its messages, and 32 KB sent as 60 small tracks under a 30 KB context is 1.8 MB of
    // records and deliveries. The body's size stays the floor (README: 4 KiB of it a unit).
    const units = shareUnits(messages.length, Math.max(decoded.length, prepared.expandedBytes), deps.destinationCount?.(source.id) ?? 1);
    const lane = deps.laneFor?.(source.id, units, receivedAt) ?? 'main';
    const records: ProduceRecord[] = new Array(messages.length);
    const perType = new Map<string, number>();
    for (let index = 0; index < messages.length; index++) {
      const { message, key } = messages[index]!;
      let encoded: { topic: string; value: Buffer };
      try {
        encoded = deps.encode(message, lane);
      } catch (error) {
        deps.logger.error({ err: error, sourceId: source.id, index, messageId: message.messageId }, 'a validated message could not be encoded');
        return {
          ok: false,
          response: refuse({
            status: 500,
            code: 'internal_error',
            error: `message ${index} passed validation but could not be encoded; nothing in this request was accepted`,
          }),
        };
      }
      records[index] = { key: Buffer.from(key, 'utf8'), value: encoded.value, topic: encoded.topic };
      perType.set(message.type, (perType.get(message.type) ?? 0) + 1);
    }
    return { ok: true, source, units, lane, records, perType };
  }

  function turnOfBody(decoded: Buffer): string {
    const hint = writeKeyHint(decoded);
    const hinted = hint === undefined ? undefined : deps.sourceByWriteKey(hint);
    return hinted?.id ?? NO_KNOWN_WRITE_KEY;
  }

  return async function handleSegmentCall(call: SegmentCall): Promise<SegmentResponse> {
    const receivedAt = now();
    if (!deps.isReady()) return refuse(unavailable('the service is not ready (loading configuration or connecting to Kafka); retry shortly'));

    const encoding = contentEncoding(call.contentEncoding);
    if (isApiError(encoding)) return refuse(encoding);
    const wrongType = checkContentType(call.contentType);
    if (wrongType) return refuse(wrongType);

    let source: Source | undefined;
    const credentials = credentialsFromHeader(call.authorization);
    if (credentials.kind === 'malformed') return refuse(missingCredentials(credentials.problem));
    if (credentials.kind === 'writeKey') {
      const auth = authenticate(credentials.writeKey, deps.sourceByWriteKey);
      if (!auth.ok) return refuse(auth.error);
      source = auth.source;
    }
    // Another scheme (an OAuth bearer token) is left to the body's write key, checked once parsed.
    const noKeyProblem = credentials.kind === 'otherScheme' ? credentials.problem : undefined;
    if (deps.isOverloaded(source?.id)) return refuse(overloaded());

    const decoded = await decodeBody(call.body ?? EMPTY, encoding);
    if (isApiError(decoded)) return refuse(decoded);
    // The CPU-heavy part, in its source's turn (fair-turns.ts). A write key in the body is
    // known for sure only once parsed: such a request waits in the turn of the source its
    // body's first writeKey names, or, naming none, with the other bodies that name none.
    const turn = source?.id ?? turnOfBody(decoded);
    const encoded = await inTurn(turn, () => encodeCall(call, decoded, source, noKeyProblem, receivedAt));
    if (!encoded.ok) return encoded.response;
    const { units, lane, records, perType } = encoded;
    source = encoded.source;

    try {
      await deps.submit(records, source.id);
    } catch (error) {
      // Per request only at debug: a failed transaction is logged once by the batcher's
      // observer, and 503s are counted in tributary_ingest_requests_total.
      deps.logger.debug({ err: error, sourceId: source.id, messages: records.length }, 'request not acknowledged by Kafka');
      if (lane === 'main') deps.giveBack?.(source.id, units);
      if (error instanceof ProduceTimeoutError) {
        return refuse(unavailable(`Kafka did not acknowledge the messages within ${error.timeoutMs} ms; retry the request`));
      }
      if (error instanceof BatcherClosedError) return refuse(unavailable('the service is shutting down; retry the request'));
      if (error instanceof BatcherFullError) return refuse(overloaded());
      return refuse(unavailable('Kafka did not accept the messages; retry the request'));
    }

    deps.metrics.batchSize.observe(records.length);
    if (lane === 'overflow') deps.metrics.overflowMessages.inc(records.length);
    for (const [type, count] of perType) deps.metrics.messages.inc({ type }, count);
    return SUCCESS;
  };
}
