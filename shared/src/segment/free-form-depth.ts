/**
 * The router's nesting rule, applied by ingest to what it is about to write: the router
 * quarantines a record whose `properties`, `traits`, `context` or `integrations` JSON text
 * nests deeper than MAX_JSON_DEPTH (services/router/src/message.ts), so ingest refuses such
 * a request instead of answering 200 for messages that would then be dropped. Checked on the
 * record's text — after the batch's context and integrations are merged in — with the same
 * function and limit, so nothing that passes here fails there. Pure.
 */
import type { IngestMessage } from '@tributary/schemas';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

export const FREE_FORM_FIELDS = ['properties', 'traits', 'context', 'integrations'] as const;
export type FreeFormField = (typeof FREE_FORM_FIELDS)[number];

/** The record's free-form fields the router would refuse as too deep, in FREE_FORM_FIELDS order. */
export function tooDeepFields(record: Pick<IngestMessage, FreeFormField>): FreeFormField[] {
  const deep: FreeFormField[] = [];
  for (const field of FREE_FORM_FIELDS) {
    const text = record[field];
    if (text !== null && nestsDeeperThan(text, MAX_JSON_DEPTH)) deep.push(field);
  }
  return deep;
}
