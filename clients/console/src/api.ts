/**
 * Every admin API call the console makes, typed after services/ingest/openapi/admin.yaml and
 * the delivery-log contract. The token travels only in the Authorization header; a 401
 * reports itself through `onUnauthorized` (the app then asks for the token again) before it
 * is thrown like any other error, whose message is the API's own `error` text.
 */

// ---- configuration -------------------------------------------------------------------------

export interface Source {
  id: string;
  name: string;
  writeKey: string;
  enabled: boolean;
}

export interface Destination {
  id: string;
  name: string;
  type: 'webhooks';
  sources: string[];
  enabled: boolean;
  settings: {
    /** "[redacted]" when set, null when not: the API never returns secrets. */
    sharedSecret: string | null;
    standardWebhooksSecret: string | null;
    webhooks: Array<{ url: string; headers: Record<string, string> }>;
  };
}

// ---- destination health (dispatchers' circuit breakers) ------------------------------------

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface Backlog {
  firstAttempts: number;
  retries: number;
  inFlight: number;
}

export interface InstanceHealth {
  instanceId: string;
  state: CircuitState;
  stateSince: string;
  openUntil: string | null;
  openings: number;
  consecutiveFailures: number;
  windowRequests: number;
  windowFailures: number;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
  backlog: Backlog;
  /** Since when the destination has not kept up (attempts stalled, or every request slot taken with deliveries waiting); null otherwise. */
  congestedSince: string | null;
  attempts: number;
  deferrals: number;
  updatedAt: string;
  stale: boolean;
}

export interface DestinationHealth {
  destinationId: string;
  state: CircuitState;
  backlog: Backlog;
  instances: InstanceHealth[];
  updatedAt: string | null;
}

// ---- delivery log (served by the indexer through ingest) -----------------------------------

export type DeliveryState = 'pending' | 'delivered' | 'retrying' | 'deferred' | 'dead';
export type AttemptKind = 'attempt' | 'deferred' | 'preflight';
export type AttemptOutcome = 'delivered' | 'retry' | 'deferred' | 'dead';

export interface AttemptTarget {
  urlIndex: number;
  origin: string;
  outcome: string;
  status: number | null;
  errorClass: string | null;
  error: string | null;
  durationMs: number | null;
  /** The response's first bytes as text. */
  responseBody: string | null;
  retryAfterMs: number | null;
}

export interface Attempt {
  /** `<partition>-<offset>` on the attempts topic: stable and unique. */
  id: string;
  deliveryId: string;
  messageId: string;
  sourceId: string;
  destinationId: string;
  messageType: string;
  userId: string | null;
  anonymousId: string | null;
  kind: AttemptKind;
  attempt: number;
  outcome: AttemptOutcome;
  lane: string | null;
  startedAt: string;
  durationMs: number | null;
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
  attempts: Attempt[];
  nextCursor: string | null;
}

export interface AttemptQuery {
  destination?: string;
  source?: string;
  /** An outcome, an HTTP status, a class (2xx, 4xx, 5xx) or `error`. */
  status?: string;
  userId?: string;
  messageId?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface IndexedMessage {
  sourceId: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  event: string | null;
  receivedAt: string;
  timestamp: string | null;
  message: unknown;
}

export interface RoutingDecision {
  sourceId: string;
  destinationId: string | null;
  decision: 'routed' | 'filtered';
  reason: string | null;
}

export interface Delivery {
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

export interface MessageDetail {
  messageId: string;
  messages: IndexedMessage[];
  routing: RoutingDecision[];
  deliveries: Delivery[];
  /** Oldest first; at most the newest 1,000. */
  attempts: Attempt[];
  /** Present when the log held more attempts (or per-source copies) than the answer does: the oldest were left out. */
  truncated?: true;
}

export interface TailMessage {
  sourceId: string;
  messageId: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  event: string | null;
  receivedAt: string;
  message: unknown;
}

export interface TailPage {
  /** Newest first. */
  messages: TailMessage[];
  cursor: string;
}

export interface DestinationSummary {
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
  circuit: { state: CircuitState; backlog: Backlog } | null;
}

export interface TimelineBucket {
  at: string;
  attempts: number;
  delivered: number;
  failed: number;
  deferred: number;
  deliveryP50Ms: number | null;
  deliveryP95Ms: number | null;
}

export interface Timeline {
  destinationId: string;
  bucketMs: number;
  buckets: TimelineBucket[];
}

export interface TimeRange {
  since?: string;
  until?: string;
}

// ---- dead letters ---------------------------------------------------------------------------

export const DEAD_LETTER_REASONS = [
  'expired',
  'http_status',
  'gone',
  'redirect',
  'tls',
  'blocked_address',
  'invalid_url',
  'destination_disabled',
  'destination_deleted',
  'undeliverable',
  'too_large',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

export interface DeadLetter {
  /** `<partition>/<offset>` on the dead-letter topic. */
  id: string;
  partition: number;
  offset: string;
  deliveryId: string;
  destinationId: string;
  sourceId: string;
  messageId: string;
  messageType: string;
  reason: DeadLetterReason;
  status: number | null;
  error: string;
  deadAt: string;
  receivedAt: string;
  firstAttemptAt: string | null;
  attempts: number;
  replays: number;
  replayedAt: string | null;
}

export interface DeadLetterList {
  order: 'newest first';
  /** All that match the filter, on this page or not. */
  matched: number;
  deadLetters: DeadLetter[];
  /** The cursor of the next (older) page, for `before`; null on the last page. */
  next: string | null;
}

export interface DeadLetterQuery {
  destination?: string;
  /** ISO-8601 with a zone, a date, or a duration meaning that long ago (`2h`). */
  since?: string;
  reason?: DeadLetterReason;
  limit?: number;
  /** A page's `next`: only the dead letters older than the last one it listed (same filters). */
  before?: string;
}

export interface ReplayRequest {
  destination: string;
  since?: string;
  reason?: DeadLetterReason;
  dryRun: boolean;
}

export interface ReplayResult {
  destination: string;
  matched: number;
  replayed: number;
  skipped: number;
  dryRun: boolean;
}

// ---- the client ------------------------------------------------------------------------------

export const ADMIN_PREFIX = '/admin/v1';

/** A failed call: `message` is the API's `error` text when it sent one. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly issues: ReadonlyArray<{ path: string; message: string }> = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type QueryValue = string | number | undefined | null;

/** `?a=1&b=x` from the values that are set; empty strings count as unset. */
export function toQuery(params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Ids a URL parser resolves as dot segments, however they are percent-encoded. */
export const DOT_SEGMENT_IDS: ReadonlySet<string> = new Set(['.', '..']);

/**
 * The message lookup's path. `/messages/..` (or `/messages/%2E%2E`) is resolved by fetch to
 * `/admin/v1/` before it leaves the browser, so ids `.` and `..` go in the query of
 * `/messages/by-id`, which the delivery log reads for exactly this.
 */
export function messagePath(messageId: string): string {
  return DOT_SEGMENT_IDS.has(messageId) ? `/messages/by-id${toQuery({ messageId })}` : `/messages/${encodeURIComponent(messageId)}`;
}

interface ErrorBody {
  error?: unknown;
  code?: unknown;
  issues?: unknown;
}

function errorFrom(status: number, statusText: string, body: unknown): ApiError {
  const { error, code, issues } = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const message = typeof error === 'string' && error !== '' ? error : `the admin API answered ${status} ${statusText}`.trim();
  const issueList = Array.isArray(issues) ? (issues as Array<{ path: string; message: string }>) : [];
  return new ApiError(message, status, typeof code === 'string' ? code : 'http_error', issueList);
}

export interface AdminApiOptions {
  token: string;
  /** Called on a 401 before the error is thrown. */
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
  /** Where the admin API is; the console is served by the same ingest, so the default is right. */
  baseUrl?: string;
}

export class AdminApi {
  private readonly fetchImpl: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: AdminApiOptions) {
    // Called as a method of globalThis: some browsers refuse a detached `fetch`.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.baseUrl = options.baseUrl ?? ADMIN_PREFIX;
  }

  sources(): Promise<{ sources: Source[] }> {
    return this.request('GET', '/sources');
  }

  destinations(): Promise<{ destinations: Destination[] }> {
    return this.request('GET', '/destinations');
  }

  destinationHealth(): Promise<{ destinations: DestinationHealth[] }> {
    return this.request('GET', '/destination-health');
  }

  deliverySummary(range: TimeRange = {}): Promise<{ since: string; until: string; destinations: DestinationSummary[] }> {
    return this.request('GET', `/delivery-summary${toQuery({ ...range })}`);
  }

  destinationSummary(destinationId: string, range: TimeRange = {}): Promise<DestinationSummary> {
    return this.request('GET', `/destinations/${encodeURIComponent(destinationId)}/summary${toQuery({ ...range })}`);
  }

  timeline(destinationId: string, query: TimeRange & { bucket?: string }): Promise<Timeline> {
    return this.request('GET', `/destinations/${encodeURIComponent(destinationId)}/timeline${toQuery({ ...query })}`);
  }

  attempts(query: AttemptQuery): Promise<AttemptPage> {
    return this.request('GET', `/attempts${toQuery({ ...query })}`);
  }

  message(messageId: string): Promise<MessageDetail> {
    return this.request('GET', messagePath(messageId));
  }

  tail(query: { after?: string; source?: string; limit?: number }): Promise<TailPage> {
    return this.request('GET', `/messages${toQuery({ ...query })}`);
  }

  deadLetters(query: DeadLetterQuery): Promise<DeadLetterList> {
    return this.request('GET', `/dlq${toQuery({ ...query })}`);
  }

  replay(request: ReplayRequest): Promise<ReplayResult> {
    return this.request('POST', '/dlq/replay', request);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // Same origin only: the token must never be sent anywhere else.
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiError(`cannot reach the ingest service: ${error instanceof Error ? error.message : String(error)}`, 0, 'network_error');
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      if (response.ok) throw new ApiError(`${method} ${path} answered with a body that is not JSON`, response.status, 'invalid_response');
      parsed = undefined;
    }
    if (response.ok) return parsed as T;
    const error = errorFrom(response.status, response.statusText, parsed);
    if (response.status === 401) this.options.onUnauthorized?.(error);
    throw error;
  }
}
