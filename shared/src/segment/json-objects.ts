/**
 * The free-form parts of a call (context, integrations, properties, traits) and the two
 * ways they are combined: a batch's `context` and `integrations` under each message's own,
 * and the `integrations` object that may come top-level (as analytics-go v2 sends it) or
 * inside `context.integrations` (as analytics.js and the mobile libraries do).
 *
 * Objects come straight from JSON.parse, so a key may be `__proto__`; it is copied as an
 * ordinary own property and never reaches an object's prototype.
 */

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function setOwn(target: JsonObject, key: string, value: unknown): void {
  // Assigning `__proto__` would set the prototype; defining it makes an ordinary property.
  // Only that key takes the slow path: defineProperty per key costs measurable CPU per message.
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function ownValue(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** `over` deep-merged onto `base`: nested objects merge key by key, anything else in `over` wins. */
export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const merged: JsonObject = { ...base };
  for (const key of Object.keys(over)) {
    const mine = over[key];
    const theirs = ownValue(merged, key);
    setOwn(merged, key, isJsonObject(theirs) && isJsonObject(mine) ? deepMerge(theirs, mine) : mine);
  }
  return merged;
}

/**
 * A batch's object under a message's own, as a batch's `context` and `integrations` apply to
 * each of its calls: deep-merged, the message winning key by key at every depth.
 */
export function mergeUnder(batchPart: JsonObject | undefined, messagePart: JsonObject | undefined): JsonObject | undefined {
  if (batchPart === undefined) return messagePart;
  if (messagePart === undefined) return batchPart;
  return deepMerge(batchPart, messagePart);
}

/** The context a message is stored with: the batch's context under the message's own. */
export function mergeContext(batchContext: JsonObject | undefined, messageContext: JsonObject | undefined): JsonObject | undefined {
  return mergeUnder(batchContext, messageContext);
}

/**
 * One integrations object from `context.integrations` and the top-level `integrations`;
 * when both name a destination, the top-level entry wins. Undefined when neither is an
 * object.
 */
export function mergeIntegrations(topLevel: JsonObject | undefined, context: JsonObject | undefined): JsonObject | undefined {
  const inContext = context === undefined ? undefined : ownValue(context, 'integrations');
  if (!isJsonObject(inContext)) return topLevel;
  if (topLevel === undefined) return inContext;
  const merged: JsonObject = { ...inContext };
  for (const key of Object.keys(topLevel)) setOwn(merged, key, topLevel[key]);
  return merged;
}
