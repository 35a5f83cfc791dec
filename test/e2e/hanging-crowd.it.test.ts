/**
 * Many hanging receivers at once, through all four services with the dispatcher's default
 * limits (512 attempts in flight, 64 per destination) and an answer window of 15 s (the default
 * is 5 s; longer here, so that waiting for it stands far apart from not waiting): ten destinations
 * that never answer take more request slots between them than the dispatcher has, before
 * anything can tell they hang. A healthy destination on another source must not wait for
 * their timeouts (fair-queue.ts: stalled destinations stop holding the global limit;
 * admission.ts: they give up their lane room), nor must a deletion notification for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, uniqueNamespace } from '@tributary/test/harness';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

const HANGING_DESTINATIONS = 10;
const WEBHOOK_TIMEOUT_MS = 15_000;

describe('a crowd of hanging receivers beside a healthy one', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-crowd'), { RETRY_LADDER: '10s', RETRY_WINDOW: '1m' }, { WEBHOOK_TIMEOUT: `${WEBHOOK_TIMEOUT_MS}ms` });
  const hanging = new Receiver(() => 'hang');
  const healthy = new Receiver(() => 200);

  beforeAll(async () => {
    await hanging.start();
    await healthy.start();
    await pipeline.start();
  });

  afterAll(async () => {
    // The hanging receiver first: its requests end, so the dispatcher's drain does not wait out the window.
    await hanging.stop();
    await pipeline.stop();
    await healthy.stop();
  });

  it('delivers to the healthy destination, a deletion notification included, without waiting for the crowd’s timeouts', { timeout: 90_000 }, async () => {
    const healthyKey = await pipeline.connect('healthy', healthy.url);
    const crowdKey = `wk_crowd_${pipeline.namespace}`;
    await pipeline.admin('PUT', '/sources/crowd', { name: 'Crowd', writeKey: crowdKey });
    for (let index = 0; index < HANGING_DESTINATIONS; index++) {
      await pipeline.admin('PUT', `/destinations/hangs-${index}`, { type: 'webhooks', sources: ['crowd'], settings: { webhooks: [{ url: hanging.url }] } });
    }
    // The config reaches the router and the dispatcher within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    // 1,000 deliveries to receivers that never answer: 640 would take slots, 512 are all there are.
    await pipeline.track(crowdKey, 100);
    await eventually(() => hanging.attempts.length >= 512, 'every request slot taken by a hanging request', 20_000);
    const sentAt = Date.now();
    const messageIds = await pipeline.track(healthyKey, 10);
    const arrivals = await eventually(
      () => messageIds.every((messageId) => healthy.attemptsFor(messageId).length > 0) && messageIds.map((messageId) => healthy.attemptsFor(messageId)[0]!.at),
      'every healthy message delivered',
      30_000,
    );
    const slowest = Math.max(...arrivals) - sentAt;
    console.log(`healthy destination beside ${HANGING_DESTINATIONS} hanging ones (${hanging.attempts.length} hanging requests): slowest of 10 messages delivered ${slowest} ms after sending`);
    // Before, they waited for a free slot: the first hanging requests' 15 s timeout. Now well
    // under a second.
    expect(slowest).toBeLessThan(WEBHOOK_TIMEOUT_MS - 5_000);

    // A deletion notification, the issue's own case: one per source, so the crowd's ten go to
    // receivers that never answer and the healthy destination's must not wait behind them.
    const askedAt = Date.now();
    const { messages } = await pipeline.admin<{ messages: Array<{ sourceId: string; messageId: string }> }>('POST', '/deletions', { userId: 'user-to-forget' });
    const notification = messages.find((message) => message.sourceId === 'web')!;
    const [arrived] = await eventually(() => healthy.attemptsFor(notification.messageId).length > 0 && healthy.attemptsFor(notification.messageId), 'the deletion notification delivered', 30_000);
    console.log(`deletion notification delivered ${arrived!.at - askedAt} ms after it was asked for`);
    expect(arrived!.at - askedAt).toBeLessThan(WEBHOOK_TIMEOUT_MS - 5_000);
  });
});
