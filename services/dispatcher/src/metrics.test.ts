import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_REASONS, QUARANTINE_REASONS, type RetryLadder } from '@tributary/shared';
import { testDelivery } from '@tributary/test/harness/deliveries';
import { createDispatcherMetrics, DestinationSeries, DISPATCHER_DEAD_LETTER_REASONS } from './metrics.js';
import { preflight, type Settlement } from './next-step.js';

const LANES = ['t.deliveries.v1', 't.deliveries.retries.v1'];

/** The series of one counter as the registry exposes them (the text a scrape reads). */
async function exposed(registry: Registry, name: string): Promise<string[]> {
  return (await registry.getSingleMetricAsString(name)).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/** The settlement of a delivery whose destination no longer exists: a `destination_deleted` dead letter. */
function deletedDestinationDeadLetter(): Extract<Settlement, { kind: 'dead' }> {
  const ladder: RetryLadder = { delaysMs: [10_000], windowMs: 3_600_000 };
  const delivery = testDelivery('crm', 'm1', { userId: null, body: Buffer.from('{}'), receivedAt: 0, routedAt: 0 });
  const settlement = preflight(delivery, undefined, ladder, 1_000);
  if (settlement.kind !== 'dead') throw new Error(`expected a dead letter, got ${settlement.kind}`);
  return settlement;
}

describe('dispatcher metrics', () => {
  it('dead-letters for every reason but too_large, which it quarantines instead', () => {
    expect([...DISPATCHER_DEAD_LETTER_REASONS].sort()).toEqual(Object.keys(DEAD_LETTER_REASONS).filter((reason) => reason !== 'too_large').sort());
  });

  // A series that first appears at 1 has nothing before it for increase() to compare with: the
  // first dead letter of a reason, or poison record of a lane, would never trip an alert.
  it('exposes every dead-letter reason and every quarantine reason of each lane at 0 before anything happened', async () => {
    const registry = new Registry();
    createDispatcherMetrics({ registry }, LANES);
    expect(await exposed(registry, 'tributary_dead_letters_total')).toEqual(DISPATCHER_DEAD_LETTER_REASONS.map((reason) => `tributary_dead_letters_total{reason="${reason}"} 0`));
    const quarantined = await exposed(registry, 'tributary_quarantined_total');
    expect(quarantined).toEqual(LANES.flatMap((topic) => QUARANTINE_REASONS.map((reason) => `tributary_quarantined_total{topic="${topic}",reason="${reason}"} 0`)));
  });

  it('counts a dead letter on the series that was there at 0', async () => {
    const registry = new Registry();
    const metrics = createDispatcherMetrics({ registry }, LANES);
    const settlement = deletedDestinationDeadLetter();
    new DestinationSeries(metrics).settle('crm', settlement, 'dead', 0);
    const lines = await exposed(registry, 'tributary_dead_letters_total');
    expect(lines).toHaveLength(DISPATCHER_DEAD_LETTER_REASONS.length);
    expect(lines).toContain('tributary_dead_letters_total{reason="destination_deleted"} 1');
    expect(lines).toContain('tributary_dead_letters_total{reason="expired"} 0');
  });

  it('does not count as a dead letter one whose record could not be written and was quarantined instead', async () => {
    const registry = new Registry();
    const metrics = createDispatcherMetrics({ registry }, LANES);
    const settlement = deletedDestinationDeadLetter();
    new DestinationSeries(metrics).settle('crm', settlement, 'dead', 0, true);
    expect(await exposed(registry, 'tributary_dead_letters_total')).toContain('tributary_dead_letters_total{reason="destination_deleted"} 0');
  });
});
