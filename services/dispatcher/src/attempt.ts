/**
 * One attempt of one delivery: the checks made before anything is sent (the destination as
 * configured now, the retry window), then one POST per URL, all at once, settled by the first
 * success (first-success.ts). Returns what happened; the dispatcher records it.
 */
import type { ConfigFreshness, ConfigView, RetryLadder } from '@tributary/shared';
import type { Delivery, Destination } from '@tributary/schemas';
import type { TargetReport } from './attempt-log.js';
import { classifyDelivery, classifyResult, requestOutcome, statusClass, urlLabel, type DeliveryVerdict, type TargetVerdict } from './classify.js';
import { settleOnFirstSuccess } from './first-success.js';
import type { DestinationSeries } from './metrics.js';
import { afterAttempt, preflight, type Settlement } from './next-step.js';
import { buildRequest } from './request.js';
import type { WebhookClient } from './webhook-client.js';

export interface AttemptDeps {
  config: ConfigView;
  freshness: ConfigFreshness;
  client: WebhookClient;
  ladder: RetryLadder;
  series: DestinationSeries;
}

export interface AttemptOutcome {
  /** `preflight`: ended before any request (destination gone or disabled, window passed). */
  kind: 'attempt' | 'preflight';
  /** The attempt's number (1 = first). */
  attempt: number;
  settlement: Settlement;
  /** The verdict over all URLs, for an attempt. */
  verdict: DeliveryVerdict | undefined;
  /** The destination as configured when the attempt was made. */
  destination: Destination | undefined;
  startedAt: number;
  durationMs: number;
  targets: TargetReport[];
}

export async function attemptDelivery(deps: AttemptDeps, delivery: Delivery, readAt: number): Promise<AttemptOutcome> {
  const { config, freshness, ladder, client, series } = deps;
  let destination = config.destination(delivery.destinationId);
  if (!destination?.enabled) {
    // Read-your-writes before ending a delivery for its config (config-freshness.ts).
    await freshness.caughtUpSince(readAt);
    destination = config.destination(delivery.destinationId);
  }
  const startedAt = Date.now();
  const attempt = delivery.attempts + 1;
  const check = preflight(delivery, destination, ladder, startedAt);
  if (check.kind === 'dead') {
    return { kind: 'preflight', attempt: delivery.attempts, settlement: check, verdict: undefined, destination, startedAt, durationMs: 0, targets: [] };
  }

  const { settings } = check.destination;
  const reports = await settleOnFirstSuccess(
    settings.webhooks.map(async (entry, index): Promise<TargetReport & TargetVerdict> => {
      const request = buildRequest(delivery, settings, entry, startedAt);
      const requestStart = performance.now();
      const result = await client.post(delivery.destinationId, entry.url, request);
      const durationMs = performance.now() - requestStart;
      const verdict = classifyResult(result);
      series.request(requestOutcome(verdict), durationMs / 1000, verdict.class, statusClass(verdict.status));
      const response = result.kind === 'response' ? result : undefined;
      return { index, url: entry.url, target: urlLabel(entry.url, index), verdict, durationMs, body: response?.body, retryAfterMs: response?.retryAfterMs };
    }),
    ({ verdict }) => verdict.class === 'success',
  );
  const now = Date.now();
  const verdict = classifyDelivery(reports);
  const settlement = afterAttempt(delivery, verdict, ladder, startedAt, now);
  return { kind: 'attempt', attempt, settlement, verdict, destination: check.destination, startedAt, durationMs: now - startedAt, targets: reports };
}
