/**
 * The delivery log's record of what the dispatcher did with a delivery once: an attempt
 * (one request per URL), a deferral without a request, or an end decided before any request
 * (destination disabled or deleted, window passed). Pure; the record is written to
 * `<ns>.attempts.v1` in the same transaction as the outcome it reports.
 */
import type { AttemptKind, AttemptTarget, Delivery, DeliveryAttempt, DeliveryLane } from '@tributary/schemas';
import type { DeferReason } from './admission.js';
import { requestOutcome, type UrlVerdict } from './classify.js';
import type { Settlement } from './next-step.js';

/** One URL's request, as the dispatcher saw it. */
export interface TargetReport {
  index: number;
  url: string;
  verdict: UrlVerdict;
  durationMs: number;
  body: Buffer | undefined;
  retryAfterMs: number | undefined;
}

export interface AttemptFacts {
  delivery: Delivery;
  lane: DeliveryLane;
  kind: AttemptKind;
  /** The attempt number for an attempt; the attempts made so far otherwise. */
  attempt: number;
  settlement: Settlement;
  startedAt: number;
  durationMs: number;
  targets: TargetReport[];
  deferReason?: DeferReason | undefined;
}

/** Scheme, host and port: paths and query strings often carry credentials. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

function target({ index, url, verdict, durationMs, body, retryAfterMs }: TargetReport): AttemptTarget {
  return {
    urlIndex: index,
    origin: originOf(url),
    outcome: requestOutcome(verdict),
    status: verdict.status,
    errorClass: verdict.class === 'success' ? null : verdict.class === 'retryable' ? verdict.kind : verdict.reason,
    error: verdict.class === 'success' ? null : verdict.detail,
    durationMs: Math.round(durationMs),
    responseBody: body ?? null,
    retryAfterMs: retryAfterMs ?? null,
  };
}

export function attemptRecord(facts: AttemptFacts): DeliveryAttempt {
  const { delivery, settlement } = facts;
  const base = {
    deliveryId: delivery.deliveryId,
    messageId: delivery.messageId,
    sourceId: delivery.sourceId,
    destinationId: delivery.destinationId,
    messageType: delivery.messageType,
    userId: delivery.userId ?? null,
    anonymousId: delivery.anonymousId ?? null,
    kind: facts.kind,
    attempt: facts.attempt,
    lane: facts.lane,
    startedAt: facts.startedAt,
    durationMs: Math.round(facts.durationMs),
    deferReason: facts.deferReason ?? null,
    receivedAt: delivery.receivedAt,
    replays: delivery.replays,
    targets: facts.targets.map(target),
  };
  switch (settlement.kind) {
    case 'delivered':
      return { ...base, outcome: 'delivered', status: settlement.status, error: null, deadReason: null, nextAttemptAt: null, tier: null };
    case 'retry': {
      const { record } = settlement;
      return {
        ...base,
        outcome: facts.kind === 'deferred' ? 'deferred' : 'retry',
        status: record.delivery.lastStatus,
        error: record.delivery.lastError,
        deadReason: null,
        nextAttemptAt: record.dueAt,
        tier: record.tier,
      };
    }
    case 'dead': {
      const { letter } = settlement;
      return { ...base, outcome: 'dead', status: letter.status, error: letter.error, deadReason: letter.reason, nextAttemptAt: null, tier: null };
    }
  }
}
