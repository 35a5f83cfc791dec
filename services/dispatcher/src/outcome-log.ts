/**
 * One log line per attempt that did not deliver (a retry scheduled, a dead letter): what was
 * tried, how each URL answered, and what happens next. A delivered attempt is a `debug` line:
 * the delivery log records every attempt, and at `info` a line per success was nearly all of a
 * busy pipeline's log volume (a line per event, 86 million a day at 1,000/s), nothing to act on.
 * URLs appear as `webhooks[i]` only (their paths and queries may hold credentials); never a
 * secret, a header value or the body (the body only at trace).
 */
import type { Logger } from '@tributary/shared';
import type { Delivery, DeliveryLane } from '@tributary/schemas';
import type { AttemptOutcome } from './attempt.js';
import { requestOutcome, statusClass } from './classify.js';

/** The level of an attempt's line: failures are for operators, successes for debugging. */
export function attemptLogLevel(outcome: AttemptOutcome): 'info' | 'debug' {
  return outcome.settlement.kind === 'delivered' ? 'debug' : 'info';
}

export function logAttempt(logger: Logger, delivery: Delivery, lane: DeliveryLane, outcome: AttemptOutcome): void {
  // Building the line costs more than writing it: nothing is built below the logger's level.
  if (!logger.isLevelEnabled(attemptLogLevel(outcome))) return;
  const { settlement } = outcome;
  const context = {
    messageId: delivery.messageId,
    deliveryId: delivery.deliveryId,
    destinationId: delivery.destinationId,
    lane,
    attempt: outcome.attempt,
    durationMs: outcome.durationMs,
    urls: outcome.targets.map((target) => ({ target: `webhooks[${target.index}]`, outcome: requestOutcome(target.verdict), status: target.verdict.status })),
  };
  switch (settlement.kind) {
    case 'delivered':
      logger.debug({ ...context, result: 'delivered', statusClass: statusClass(settlement.status) }, 'delivered');
      break;
    case 'retry': {
      const { record } = settlement;
      logger.info(
        { ...context, result: 'retry', statusClass: statusClass(record.delivery.lastStatus), tier: record.tier, dueAt: new Date(record.dueAt).toISOString(), reason: record.delivery.lastError },
        'delivery failed; retry scheduled',
      );
      break;
    }
    case 'dead': {
      const { letter } = settlement;
      logger.info({ ...context, result: 'dead', statusClass: statusClass(letter.status), reason: letter.reason, error: letter.error }, 'delivery dead-lettered');
      break;
    }
  }
  if (logger.isLevelEnabled('trace')) logger.trace({ deliveryId: delivery.deliveryId, body: delivery.body.toString('utf8') }, 'delivery body');
}
