/**
 * The message shapes of Segment's HTTP tracking API, as `@tributary/producer` takes them.
 * The types guide; ingest's validation (shared) decides: what it would answer 400 to,
 * the producer refuses with the same code and text.
 */

/** Free-form JSON fields: properties, traits, context. Dates are written as ISO 8601 text. */
export type JsonObject = Record<string, unknown>;

/** `{ All: false, Webhooks: true }`, case-sensitive, as in Segment. */
export type Integrations = Record<string, boolean | JsonObject>;

interface Common {
  /** Set it yourself to make a resend after an unknown outcome safe: the router forwards a messageId once per source. */
  messageId?: string;
  /** When the event happened: an ISO 8601 string or a Date. Defaults to when it was written. */
  timestamp?: string | Date;
  context?: JsonObject;
  integrations?: Integrations;
}

/** Every call names the user: a userId, an anonymousId, or both. */
export type Identity = { userId: string; anonymousId?: string } | { userId?: string; anonymousId: string };

export type IdentifyCall = Common & Identity & { traits?: JsonObject };
export type TrackCall = Common & Identity & { event: string; properties?: JsonObject };
export type PageCall = Common & Identity & { name?: string; category?: string; properties?: JsonObject };
export type ScreenCall = Common & Identity & { name?: string; category?: string; properties?: JsonObject };
export type GroupCall = Common & Identity & { groupId: string; traits?: JsonObject };
export type AliasCall = Common & { userId: string; previousId: string; anonymousId?: string };

/** One message of a batch: a call with its `type`. */
export type BatchMessage =
  | ({ type: 'identify' } & IdentifyCall)
  | ({ type: 'track' } & TrackCall)
  | ({ type: 'page' } & PageCall)
  | ({ type: 'screen' } & ScreenCall)
  | ({ type: 'group' } & GroupCall)
  | ({ type: 'alias' } & AliasCall);

export interface BatchOptions {
  /** Merged under each message's own context, as a batch's `context` is over HTTP. */
  context?: JsonObject;
}
