/**
 * A destination's health as an operator sees it, through all four services: a receiver that
 * fails every request opens the destination's circuit, which the admin API
 * (`GET /admin/v1/destinations/{id}/health`, `GET /admin/v1/destination-health`) and the CLI
 * (`tributary destinations health`) report, while a healthy destination beside it stays
 * closed; once the receiver answers again, a probe closes the circuit and the deferred
 * messages arrive through the retry ladder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, uniqueNamespace } from '@tributary/test/harness';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

interface Health {
  destinationId: string;
  state: string;
  backlog: { firstAttempts: number; retries: number; inFlight: number };
  instances: Array<{ instanceId: string; state: string; consecutiveFailures: number; deferrals: number; lastError: string | null; stale: boolean }>;
}

describe('destination health', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-health'), { RETRY_LADDER: '1s,2s', RETRY_WINDOW: '5m' }, { CIRCUIT_FAILURES: '3', CIRCUIT_OPEN: '2s' });
  let failing = true;
  const flaky = new Receiver(() => (failing ? 503 : 200));
  const steady = new Receiver(() => 200);

  beforeAll(async () => {
    await flaky.start();
    await steady.start();
    await pipeline.start();
  });

  afterAll(async () => {
    await pipeline.stop();
    await flaky.stop();
    await steady.stop();
  });

  it('shows an open circuit in the admin API and the CLI, and closed again once the receiver answers', { timeout: 90_000 }, async () => {
    const writeKey = await pipeline.connect('flaky', flaky.url);
    await pipeline.admin('PUT', '/destinations/steady', { type: 'webhooks', sources: ['web'], settings: { webhooks: [{ url: steady.url }] } });
    // A first burst opens the circuit. Its requests may all be in flight before the first
    // failure comes back, so the saving is measured on what is sent once the circuit is open.
    const messageIds = await pipeline.track(writeKey, 5);

    const open = await eventually(async () => {
      const health = await pipeline.admin<Health>('GET', '/destinations/flaky/health');
      return health.state === 'open' && health;
    }, 'the flaky circuit reported open', 20_000);
    expect(open.instances).toHaveLength(1);
    expect(open.instances[0]).toMatchObject({ instanceId: 'e2e-dispatcher', state: 'open', stale: false });
    expect(open.instances[0]!.lastError).toContain('HTTP 503');

    const all = await pipeline.admin<{ destinations: Health[] }>('GET', '/destination-health');
    expect(Object.fromEntries(all.destinations.map((health) => [health.destinationId, health.state]))).toEqual({ flaky: 'open', steady: 'closed' });
    await expect(pipeline.admin('GET', '/destinations/nope/health')).rejects.toThrow(/404/);

    const cli = await pipeline.cli(['destinations', 'health']);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^flaky\s+open\s+\S+/m);
    expect(cli.stdout).toMatch(/^steady\s+closed\s+-/m);

    // While open, deliveries are deferred to the ladder without a request: at most a
    // half-open probe or two reach the receiver for the next twenty messages.
    const requestsWhenOpened = flaky.attempts.length;
    const deferredBefore = (await pipeline.admin<Health>('GET', '/destinations/flaky/health')).instances[0]!.deferrals;
    messageIds.push(...(await pipeline.track(writeKey, 20)));
    await eventually(async () => {
      const health = await pipeline.admin<Health>('GET', '/destinations/flaky/health');
      return (health.instances[0]?.deferrals ?? 0) - deferredBefore + (flaky.attempts.length - requestsWhenOpened) >= 20;
    }, 'the twenty later messages deferred or attempted', 20_000);
    expect(flaky.attempts.length - requestsWhenOpened).toBeLessThan(20);

    // The receiver recovers: a probe after the cool-down closes the circuit and every
    // message deferred meanwhile arrives through the ladder.
    failing = false;
    await eventually(() => messageIds.every((messageId) => flaky.attemptsFor(messageId).some((attempt) => attempt.status === 200)), 'every message delivered', 40_000);
    await eventually(async () => (await pipeline.admin<Health>('GET', '/destinations/flaky/health')).state === 'closed', 'the circuit reported closed', 20_000);
  });
});
