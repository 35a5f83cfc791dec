/**
 * One Segment call, already parsed from JSON, turned into the records ingest writes: every
 * message validated as ingest's HTTP API validates it (all or nothing), then normalised
 * into an IngestMessage keyed for the router, and each record held to the router's nesting
 * rule once the batch's context and integrations are merged in. Ingest and
 * @tributary/producer both go through here, so a record is on the ingest topic only if the
 * HTTP API would have taken it, and the router takes every record the HTTP API took.
 */
import type { IngestMessage } from '@tributary/schemas';
import { MAX_JSON_DEPTH } from '../json-depth.js';
import type { ApiError } from './api-error.js';
import { tooDeepFields, type FreeFormField } from './free-form-depth.js';
import { recordKey, toIngestMessage, type Receipt } from './normalise.js';
import { ProblemList } from './problems.js';
import { validateRequest, type CallKind, type Envelope } from './validation.js';

export interface PreparedMessage {
  message: IngestMessage;
  /** The Kafka record key: anonymousId, else userId. */
  key: string;
}

export type PreparedCall =
  | {
      ok: true;
      messages: PreparedMessage[];
      /** Bytes of JSON the messages are written as, the batch's shared parts in each (validation.ts's ValidRequest). */
      expandedBytes: number;
    }
  | { ok: false; error: ApiError };

export interface PrepareOptions {
  /**
   * The body is known to hold no free-form field nesting deeper than MAX_JSON_DEPTH, merged
   * or not (parseJsonBody's `fieldsWithinDepth`), so the records need no nesting check.
   * Unset, each record is checked.
   */
  fieldsWithinDepth?: boolean;
}

export function prepareCall(body: unknown, kind: CallKind, receipt: Receipt, options: PrepareOptions = {}): PreparedCall {
  const validation = validateRequest(body, kind);
  if (!validation.ok) return validation;
  const { envelope, messages, expandedBytes } = validation.request;
  const prepared: PreparedMessage[] = new Array(messages.length);
  const tooDeep = new ProblemList();
  for (let index = 0; index < messages.length; index++) {
    const message = toIngestMessage(messages[index]!, envelope, receipt);
    if (options.fieldsWithinDepth !== true) {
      for (const field of tooDeepFields(message)) tooDeep.add(index, messages[index]!.messageId, field, tooDeepMessage(field, envelope));
    }
    prepared[index] = { message, key: recordKey(message) };
  }
  if (tooDeep.count > 0) {
    return { ok: false, error: { status: 400, code: 'too_deep', error: tooDeep.sentence(), details: { limit: MAX_JSON_DEPTH, ...tooDeep.details() } } };
  }
  return { ok: true, messages: prepared, expandedBytes };
}

/** Names what was merged into the field: the message's own part may be within the limit. */
function tooDeepMessage(field: FreeFormField, envelope: Envelope): string {
  const merged =
    field === 'integrations'
      ? ' (merged from the top-level integrations and context.integrations, the batch\'s and the message\'s)'
      : field === 'context' && envelope.context !== undefined
        ? " (with the batch's context merged in)"
        : '';
  return `${field} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep${merged}; flatten it`;
}
