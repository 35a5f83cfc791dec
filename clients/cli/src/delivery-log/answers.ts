/**
 * The delivery log's answers as the admin API gives them (services/ingest/openapi/admin.yaml,
 * schemas Attempt, MessageHistory, TailPage, DeliverySummary): only types, for the CLI's
 * formatting. Times are ISO-8601 UTC strings.
 */

export interface AttemptTarget {
  urlIndex: number;
  /** Scheme, host and port only: the rest of a URL may hold credentials. */
  origin: string;
  outcome: string;
  status: number | null;
  errorClass: string | null;
  error: string | null;
  durationMs: number;
  /** The response's first bytes as text, from the receiver: anything may be in it. */
  responseBody: string | null;
  retryAfterMs: number | null;
}

export interface Attempt {
  id: string;
  deliveryId: string;
  messageId: string;
  sourceId: string;
  destinationId: string;
  messageType: string;
  userId: string | null;
  anonymousId: string | null;
  kind: 'attempt' | 'deferred' | 'preflight';
  attempt: number;
  outcome: 'delivered' | 'retry' | 'deferred' | 'dead';
  lane: string;
  startedAt: string;
  durationMs: number;
  status: number | null;
  error: string | null;
  deferReason: string | null;
  deadReason: string | null;
  nextAttemptAt: string | null;
  tier: string | null;
  receivedAt: string;
  replays: number;
  targets: AttemptTarget[];
}

export interface AttemptPage {
  /** Newest first. */
  attempts: Attempt[];
  nextCursor: string | null;
}

export interface IndexedMessage {
  sourceId: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  event: string | null;
  receivedAt: string;
  timestamp: string;
  message: Record<string, unknown>;
}

export interface RoutingDecision {
  sourceId: string;
  destinationId: string | null;
  decision: 'routed' | 'filtered';
  reason: string | null;
}

export type DeliveryState = 'pending' | 'delivered' | 'retrying' | 'deferred' | 'dead';

export interface DeliveryStatus {
  deliveryId: string;
  sourceId: string;
  destinationId: string;
  state: DeliveryState;
  attempts: number;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  latencyMs: number | null;
}

export interface MessageHistory {
  messageId: string;
  messages: IndexedMessage[];
  routing: RoutingDecision[];
  deliveries: DeliveryStatus[];
  /** Oldest first. */
  attempts: Attempt[];
}

export interface TailMessage {
  sourceId: string;
  messageId: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  event: string | null;
  receivedAt: string;
  message: Record<string, unknown>;
}

export interface TailPage {
  /** Newest first. */
  messages: TailMessage[];
  cursor: string;
}

export interface DeliverySummary {
  destinationId: string;
  since: string;
  until: string;
  attempts: number;
  delivered: number;
  failed: number;
  deferred: number;
  deadLetters: number;
  successRate: number | null;
  latency: { deliveryP50Ms: number | null; deliveryP95Ms: number | null; attemptP50Ms: number | null; attemptP95Ms: number | null };
  retriesPending: number;
  /** Null when no dispatcher has reported on the destination. */
  circuit: { state: string; backlog: { firstAttempts: number; retries: number; inFlight: number }; updatedAt: string | null } | null;
}

export interface DeliverySummaries {
  since: string;
  until: string;
  destinations: DeliverySummary[];
}
