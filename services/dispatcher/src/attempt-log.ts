/**
 * The delivery log's record of what the dispatcher did with a delivery once: an attempt
 * (one request per URL), a deferral without a request, or an end decided before any request
 * (destination disabled or deleted, window passed). Pure; the record is written to
 * `<ns>.attempts.v1` in the same transaction as the outcome it reports.
 */
import type { AttemptKind, AttemptTarget, Delivery, DeliveryAttempt, DeliveryLane } from '@tributary/schemas';
import type { DeferReason } from './admission.js';
import { originOf, requestOutcome, type UrlVerdict } from './classify.js';
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

function target({ index, url, verdict, durationMs, body, retryAfterMs }: TargetReport): AttemptTarget {
  const failed = verdict.class !== 'success';
  return {
    urlIndex: index,
    origin: originOf(url),
    outcome: requestOutcome(verdict),
    status: verdict.status,
    errorClass: verdict.class === 'success' ? null : verdict.class === 'retryable' ? verdict.kind : verdict.reason,
    error: failed ? verdict.detail : null,
    durationMs: Math.round(durationMs),
    responseBody: body ?? null,
    retryAfterMs: retryAfterMs ?? null,
  };
}

/**
 * The record, built as one object literal whatever the outcome: one shape for every record
 * keeps this (and the Avro encoder after it) monomorphic on the dispatcher's hottest path.
 */
export function attemptRecord(facts: AttemptFacts): DeliveryAttempt {
  const { delivery, settlement } = facts;
  const retry = settlement.kind === 'retry' ? settlement.record : undefined;
  const dead = settlement.kind === 'dead' ? settlement.letter : undefined;
  const targets = facts.targets.length === 0 ? [] : facts.targets.map(target);
  return {
    deliveryId: delivery.deliveryId,
    messageId: delivery.messageId,
    sourceId: delivery.sourceId,
    destinationId: delivery.destinationId,
    messageType: delivery.messageType,
    userId: delivery.userId ?? null,
    anonymousId: delivery.anonymousId ?? null,
    kind: facts.kind,
    attempt: facts.attempt,
    outcome: retry ? (facts.kind === 'deferred' ? 'deferred' : 'retry') : settlement.kind,
    lane: facts.lane,
    startedAt: facts.startedAt,
    durationMs: Math.round(facts.durationMs),
    status: settlement.kind === 'delivered' ? settlement.status : retry ? retry.delivery.lastStatus : dead!.status,
    error: retry ? retry.delivery.lastError : dead ? dead.error : null,
    deferReason: facts.deferReason ?? null,
    deadReason: dead ? dead.reason : null,
    nextAttemptAt: retry ? retry.dueAt : null,
    tier: retry ? retry.tier : null,
    receivedAt: delivery.receivedAt,
    replays: delivery.replays,
    targets,
  };
}
