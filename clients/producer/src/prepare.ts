/**
 * From the caller's objects to keyed IngestMessages, through exactly the path a request
 * to ingest takes after authentication: serialised to JSON (Dates become ISO text,
 * undefined fields vanish, as on the wire), held to the request size limit, parsed with
 * the nesting check, validated whole and normalised (shared/src/segment). All or nothing.
 */
import type { Source } from '@tributary/schemas';
import {
  MAX_REQUEST_BYTES,
  parseJsonBody,
  prepareCall,
  requestTooLarge,
  type ApiError,
  type CallKind,
  type PreparedMessage,
} from '@tributary/shared/segment';

export type Prepared = { ok: true; messages: PreparedMessage[] } | { ok: false; error: ApiError };

export interface Receipt {
  source: Source;
  receivedAt: number;
  newMessageId: () => string;
}

export function prepareMessages(body: object, kind: CallKind, receipt: Receipt): Prepared {
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (error) {
    // A cycle, or a BigInt: what no HTTP client could have sent either.
    return { ok: false, error: { status: 400, code: 'invalid_json', error: `the call cannot be written as JSON: ${(error as Error).message}` } };
  }
  if (json === undefined) return { ok: false, error: { status: 400, code: 'invalid_body', error: 'the request body must be a JSON object' } };
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length > MAX_REQUEST_BYTES) return { ok: false, error: requestTooLarge(bytes.length) };
  const parsed = parseJsonBody(bytes);
  if (!parsed.ok) return parsed;
  return prepareCall(parsed.value, kind, { sourceId: receipt.source.id, receivedAt: receipt.receivedAt, newMessageId: receipt.newMessageId });
}
