/**
 * A log line per attempt that did not deliver (a retry scheduled, a dead letter): what was
 * tried, how each URL answered, and what happens next — up to FAILED_ATTEMPT_LINES per
 * destination every FAILED_ATTEMPT_INTERVAL_MS; past that, one line per destination says how many
 * more failed (a destination answering 401 to every one of a thousand events a second is the
 * same news each time, and the delivery log has every attempt). A delivered attempt is a `debug`
 * line: at `info` a line per success was nearly all of a busy pipeline's log volume (a line per
 * event, 86 million a day at 1,000/s), nothing to act on. Lines past the budget go to `debug` too.
 * URLs appear as `webhooks[i]` only (their paths and queries may hold credentials); never a
 * secret, a header value or the body (the body only at trace).
 */
import { LogTally, type Logger } from '@tributary/shared';
import type { Delivery, DeliveryLane } from '@tributary/schemas';
import type { AttemptOutcome } from './attempt.js';
import { requestOutcome, statusClass } from './classify.js';

/** Failed attempts of one destination logged one by one in each interval. */
export const FAILED_ATTEMPT_LINES = 10;
export const FAILED_ATTEMPT_INTERVAL_MS = 10_000;

/** The level of an attempt's line: failures are for operators, successes for debugging. */
function attemptLogLevel(outcome: AttemptOutcome): 'info' | 'debug' {
  return outcome.settlement.kind === 'delivered' ? 'debug' : 'info';
}

/** The dispatcher's attempt lines, with the per-destination budget of failure lines. */
export class AttemptLog {
  private readonly failures: LogTally;

  constructor(private readonly logger: Logger) {
    this.failures = new LogTally({
      logger,
      message: 'more failed attempts than are logged one by one: counted (the delivery log has each)',
      keyField: 'destinationId',
      intervalMs: FAILED_ATTEMPT_INTERVAL_MS,
      budget: FAILED_ATTEMPT_LINES,
    });
  }

  start(): void {
    this.failures.start();
  }

  stop(): void {
    this.failures.stop();
  }

  log(delivery: Delivery, lane: DeliveryLane, outcome: AttemptOutcome): void {
    let level = attemptLogLevel(outcome);
    // Below the logger's level (warn, the benchmark's) there is nothing to write or count.
    if (!this.logger.isLevelEnabled(level)) return;
    if (level === 'info' && !this.failures.count(delivery.destinationId)) level = 'debug';
    logAttempt(this.logger, level, delivery, lane, outcome);
  }
}

function logAttempt(logger: Logger, level: 'info' | 'debug', delivery: Delivery, lane: DeliveryLane, outcome: AttemptOutcome): void {
  // Building the line costs more than writing it: nothing is built below the logger's level.
  if (!logger.isLevelEnabled(level)) return;
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
      logger[level](
        { ...context, result: 'retry', statusClass: statusClass(record.delivery.lastStatus), tier: record.tier, dueAt: new Date(record.dueAt).toISOString(), reason: record.delivery.lastError },
        'delivery failed; retry scheduled',
      );
      break;
    }
    case 'dead': {
      const { letter } = settlement;
      logger[level]({ ...context, result: 'dead', statusClass: statusClass(letter.status), reason: letter.reason, error: letter.error }, 'delivery dead-lettered');
      break;
    }
  }
  if (logger.isLevelEnabled('trace')) logger.trace({ deliveryId: delivery.deliveryId, body: delivery.body.toString('utf8') }, 'delivery body');
}
