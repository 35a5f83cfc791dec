/**
 * One Segment call, already parsed from JSON, turned into the records ingest writes: every
 * message validated as ingest's HTTP API validates it (all or nothing), then normalised
 * into an IngestMessage keyed for the router. Ingest and @tributary/producer both go
 * through here, so a record is on the ingest topic only if the HTTP API would have taken it.
 */
import type { IngestMessage } from '@tributary/schemas';
import type { ApiError } from './api-error.js';
import { recordKey, toIngestMessage, type Receipt } from './normalise.js';
import { validateRequest, type CallKind } from './validation.js';

export interface PreparedMessage {
  message: IngestMessage;
  /** The Kafka record key: anonymousId, else userId. */
  key: string;
}

export type PreparedCall = { ok: true; messages: PreparedMessage[] } | { ok: false; error: ApiError };

export function prepareCall(body: unknown, kind: CallKind, receipt: Receipt): PreparedCall {
  const validation = validateRequest(body, kind);
  if (!validation.ok) return validation;
  const { envelope, messages } = validation.request;
  const prepared: PreparedMessage[] = new Array(messages.length);
  for (let index = 0; index < messages.length; index++) {
    const message = toIngestMessage(messages[index]!, envelope, receipt);
    prepared[index] = { message, key: recordKey(message) };
  }
  return { ok: true, messages: prepared };
}
