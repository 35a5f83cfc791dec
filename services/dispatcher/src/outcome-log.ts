/**
 * One log line per attempt: what was tried, how each URL answered, and what happens next.
 * URLs appear as `webhooks[i]` only (their paths and queries may hold credentials); never a
 * secret, a header value or the body (the body only at debug).
 */
import type { Logger } from '@tributary/shared';
import type { Delivery, DeliveryLane } from '@tributary/schemas';
import type { AttemptOutcome } from './attempt.js';
import { requestOutcome, statusClass } from './classify.js';

export function logAttempt(logger: Logger, delivery: Delivery, lane: DeliveryLane, outcome: AttemptOutcome): void {
  // Building the line costs more than writing it; at warn (the benchmark's level) nothing is built.
  if (!logger.isLevelEnabled('info')) return;
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
      logger.info({ ...context, result: 'delivered', statusClass: statusClass(settlement.status) }, 'delivered');
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
  if (logger.isLevelEnabled('debug')) logger.debug({ deliveryId: delivery.deliveryId, body: delivery.body.toString('utf8') }, 'delivery body');
}
