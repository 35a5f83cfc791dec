/**
 * Whether a message may go to Webhooks destinations, decided by its integrations object
 * the way the platform does: the key `Webhooks` decides when present (only a boolean
 * false disables; true, an options object, a string… enable), otherwise `All` decides the
 * same way, otherwise the message goes. Keys are case-sensitive: `webhooks`, `WEBHOOKS` or
 * `all` are other destinations' names, not ours, and change nothing.
 *
 * The object may sit top-level (ingest stores the merged object in the record's
 * `integrations` field) or only in `context.integrations` (producers writing Avro
 * directly); both are read and merged per key, the top-level one winning, as ingest does.
 */
import { isJsonObject, type JsonObject } from '../segment/json-objects.js';

export const WEBHOOKS_KEY = 'Webhooks';
export const ALL_KEY = 'All';

const ABSENT = Symbol('absent');

/** The integrations object carried in a context, when it is one. */
export function contextIntegrations(context: JsonObject): JsonObject | null {
  const nested = Object.hasOwn(context, 'integrations') ? context.integrations : undefined;
  return isJsonObject(nested) ? nested : null;
}

export function webhooksEnabled(topLevel: JsonObject | null, fromContext: JsonObject | null): boolean {
  // Reads the merged object key by key instead of building it: this runs per message.
  const merged = (key: string): unknown => {
    if (topLevel !== null && Object.hasOwn(topLevel, key)) return topLevel[key];
    if (fromContext !== null && Object.hasOwn(fromContext, key)) return fromContext[key];
    return ABSENT;
  };
  const webhooks = merged(WEBHOOKS_KEY);
  if (webhooks !== ABSENT) return webhooks !== false;
  const all = merged(ALL_KEY);
  if (all !== ABSENT) return all !== false;
  return true;
}
