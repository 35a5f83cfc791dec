/**
 * Dead letters through the admin API: `GET /dlq` lists them newest first, a page at a time
 * (`next` → `before`), `POST /dlq/replay` sends a destination's dead letters back to the
 * retry lane with a fresh retry window. The Kafka work is `DeadLetterStore`
 * (shared/dead-letters.ts); here are the request rules, the answer shapes and one replay at a
 * time per process.
 *
 * A replay's time grows with the backlog, past any fixed write timeout once the backlog is
 * large or the host slow, so its answer waits as long as the replay moves on, and says 503
 * only once it has stalled for the write timeout.
 *
 * Dead letters hold no secrets (the destination's URLs and secret are read from the
 * config at attempt time, and errors name URLs by origin only). Message bodies may hold
 * personal data, so they are shown only when asked for with `body=true`.
 */
import { z } from 'zod';
import {
  DEAD_LETTER_REASONS,
  DeadLetterReadTimeout,
  formatDeadLetterCursor,
  isDeadLetterReason,
  parseDeadLetterCursor,
  parseTime,
  ReplayInterrupted,
  TimeError,
  type ConfigView,
  type DeadLetterStore,
  type ListedDeadLetter,
  type ReplayOutcome,
} from '@tributary/shared';
import { AdminError, notFound, parseBody } from './errors.js';
import type { AdminRoutes } from './routes.js';
import { SerialQueue } from './serial.js';

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export const time = z.string().transform((text, ctx) => {
  try {
    return parseTime(text, Date.now());
  } catch (error) {
    if (!(error instanceof TimeError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

const reason = z.string().refine(isDeadLetterReason, { message: `must be one of: ${Object.keys(DEAD_LETTER_REASONS).join(', ')}` });

/** A page's cursor: the `next` of the answer before, naming the last dead letter it listed. */
const cursor = z.string().transform((text, ctx) => {
  const position = parseDeadLetterCursor(text);
  if (position) return position;
  ctx.addIssue({ code: 'custom', message: 'is not a dead-letter cursor (pass the "next" of an earlier answer as it is)' });
  return z.NEVER;
});

const destinationId = z.string({ error: 'is required' }).min(1, 'may not be empty').max(128, 'is at most 128 characters');

export const listQuery = z
  .object({
    destination: destinationId.optional(),
    since: time.optional(),
    reason: reason.optional(),
    limit: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(MAX_LIST_LIMIT, `must be at most ${MAX_LIST_LIMIT}`).default(DEFAULT_LIST_LIMIT),
    body: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
    before: cursor.optional(),
  })
  .strict();

const replayRequest = z
  .object(
    {
      destination: destinationId,
      since: time.optional(),
      reason: reason.optional(),
      dryRun: z.boolean({ error: 'must be true or false' }).optional(),
    },
    { error: 'must be an object with a "destination"' },
  )
  .strict();

/** One dead letter as the API shows it: times in ISO-8601, the body only on request. */
export interface DeadLetterView {
  id: string;
  partition: number;
  offset: string;
  deliveryId: string;
  destinationId: string;
  sourceId: string;
  messageId: string;
  messageType: string;
  reason: string;
  status: number | null;
  error: string;
  deadAt: string;
  receivedAt: string;
  firstAttemptAt: string | null;
  attempts: number;
  replays: number;
  replayedAt: string | null;
  body?: string;
}

const iso = (time: number) => new Date(time).toISOString();

export function deadLetterView({ partition, offset, letter, replayedAt }: ListedDeadLetter, withBody: boolean): DeadLetterView {
  const { delivery } = letter;
  const view: DeadLetterView = {
    id: `${partition}/${offset}`,
    partition,
    offset,
    deliveryId: delivery.deliveryId,
    destinationId: delivery.destinationId,
    sourceId: delivery.sourceId,
    messageId: delivery.messageId,
    messageType: delivery.messageType,
    reason: letter.reason,
    status: letter.status,
    error: letter.error,
    deadAt: iso(letter.deadAt),
    receivedAt: iso(delivery.receivedAt),
    firstAttemptAt: delivery.firstAttemptAt === null ? null : iso(delivery.firstAttemptAt),
    attempts: delivery.attempts,
    replays: delivery.replays,
    replayedAt: replayedAt === undefined ? null : iso(replayedAt),
  };
  if (withBody) view.body = delivery.body.toString('utf8');
  return view;
}

export interface DeadLetterListView {
  order: 'newest first';
  /** Every dead letter matching the filter, on this page or not. */
  matched: number;
  deadLetters: DeadLetterView[];
  /** The cursor of the next (older) page, to pass as `before` with the same filters; null on the last page. */
  next: string | null;
}

export interface ReplayView extends ReplayOutcome {
  destination: string;
}

export interface AdminDeadLettersOptions {
  store: DeadLetterStore;
  config: Pick<ConfigView, 'destination'>;
  /** How long a replay may make no progress before the answer is 503 (ADMIN_WRITE_TIMEOUT). */
  timeoutMs: number;
}

/**
 * Waits for `work` as long as it reports progress, rejecting with 503 once it has reported none
 * for `timeoutMs` (from the start, or from its last report). Like `withDeadline`, only the wait
 * ends: the work goes on.
 */
export function whileProgressing<T>(work: (progress: () => void) => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let lastProgress = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_resolve, reject) => {
    const check = () => {
      const idle = Date.now() - lastProgress;
      if (idle < timeoutMs) {
        timer = setTimeout(check, timeoutMs - idle);
        return;
      }
      reject(new AdminError(503, 'kafka_unavailable', `${what} made no progress for ${timeoutMs / 1000} s (Kafka is slow or away, or another replay through this ingest is ahead of it); it may still take effect, so read the state back before retrying`));
    };
    timer = setTimeout(check, timeoutMs);
  });
  const progress = () => {
    lastProgress = Date.now();
  };
  return Promise.race([work(progress), stalled]).finally(() => clearTimeout(timer));
}

/** The admin answer to a replay stopped part-way: how many went out is in the body too. */
export function interruptedReplayError(error: ReplayInterrupted): AdminError {
  // Only a certain fence by another replay is a conflict; a slice the broker may have aborted
  // for running too long is Kafka being slow.
  return error.byAnotherReplay
    ? new AdminError(409, 'replay_conflict', error.message, [], { replayed: error.replayed })
    : new AdminError(503, 'kafka_unavailable', error.message, [], { replayed: error.replayed });
}

export class AdminDeadLetters {
  private readonly replays = new SerialQueue();

  constructor(private readonly options: AdminDeadLettersOptions) {}

  async list(query: unknown): Promise<DeadLetterListView> {
    const { destination, since, reason, limit, body, before } = parseBody(listQuery, query, 'dead-letter query');
    const listed = await this.read(() => this.options.store.list({ destinationId: destination, since, reason }, limit, before));
    return {
      order: 'newest first',
      matched: listed.matched,
      deadLetters: listed.deadLetters.map((entry) => deadLetterView(entry, body === 'true')),
      next: listed.next === undefined ? null : formatDeadLetterCursor(listed.next),
    };
  }

  async replay(requestBody: unknown): Promise<ReplayView> {
    const { destination, since, reason, dryRun } = parseBody(replayRequest, requestBody, 'replay request');
    const current = this.options.config.destination(destination);
    if (!current) throw notFound('destination', destination);
    if (!current.enabled) {
      throw new AdminError(409, 'destination_disabled', `destination "${destination}" is disabled; enable it first, or its replayed deliveries would be dead letters again`);
    }
    const outcome = await whileProgressing(
      (onProgress) => this.replays.run(() => this.read(() => this.options.store.replay({ destinationId: destination, since, reason }, { dryRun: dryRun ?? false, onProgress }))),
      this.options.timeoutMs,
      'the replay',
    );
    return { destination, ...outcome };
  }

  /** Resolves once no replay is in flight (used at shutdown). */
  idle(): Promise<void> {
    return this.replays.idle();
  }

  private async read<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DeadLetterReadTimeout) {
        throw new AdminError(503, 'kafka_unavailable', `${error.message}; retry, or narrow the request with since or destination`);
      }
      if (error instanceof ReplayInterrupted) throw interruptedReplayError(error);
      throw error;
    }
  }
}

export const dlqRoutes: AdminRoutes = (scope, { deadLetters }) => {
  scope.get('/dlq', async (request) => deadLetters.list(request.query));
  scope.post('/dlq/replay', async (request) => deadLetters.replay(request.body));
};
