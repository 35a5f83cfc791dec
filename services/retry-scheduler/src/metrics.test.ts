import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { QUARANTINE_REASONS } from '@tributary/shared';
import { createSchedulerMetrics, zeroTierMetrics } from './metrics.js';

const tierTopic = (tier: string) => `t.retry.${tier}.v1`;
const gauges = { heldHeads: () => [], pending: { measure: () => Promise.resolve([]) }, now: () => 0 } as unknown as Parameters<typeof createSchedulerMetrics>[3];

async function exposed(registry: Registry, name: string): Promise<string[]> {
  return (await registry.getSingleMetricAsString(name)).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('scheduler metrics', () => {
  // A series that first appears at 1 has nothing before it for increase() to compare with.
  it('exposes the expired dead letters and every quarantine reason of each tier topic at 0 from the start', async () => {
    const registry = new Registry();
    createSchedulerMetrics(registry, ['10s', '1m'], tierTopic, gauges);
    expect(await exposed(registry, 'tributary_dead_letters_total')).toEqual(['tributary_dead_letters_total{reason="expired"} 0']);
    expect(await exposed(registry, 'tributary_quarantined_total')).toEqual(
      ['10s', '1m'].flatMap((tier) => QUARANTINE_REASONS.map((reason) => `tributary_quarantined_total{topic="${tierTopic(tier)}",reason="${reason}"} 0`)),
    );
  });

  it('adds the series of a tier found after start-up at 0', async () => {
    const registry = new Registry();
    const metrics = createSchedulerMetrics(registry, ['10s'], tierTopic, gauges);
    zeroTierMetrics(metrics, '2h', tierTopic('2h'));
    expect(await exposed(registry, 'tributary_quarantined_total')).toContain('tributary_quarantined_total{topic="t.retry.2h.v1",reason="not_framed"} 0');
    expect(await exposed(registry, 'tributary_retries_released_total')).toContain('tributary_retries_released_total{tier="2h"} 0');
    expect(await exposed(registry, 'tributary_retries_expired_total')).toContain('tributary_retries_expired_total{tier="2h"} 0');
  });
});
