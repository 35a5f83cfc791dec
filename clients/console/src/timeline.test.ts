import { describe, expect, it } from 'vitest';
import { CHART_RANGES, chartRange, hasTraffic, rangeQuery, toSeries } from './timeline';

describe('chart ranges', () => {
  it('each stays well under the API limit of 1,000 buckets', () => {
    const bucketMs: Record<string, number> = { '10s': 10_000, '1m': 60_000, '5m': 300_000, '15m': 900_000, '2h': 7_200_000 };
    for (const range of CHART_RANGES) {
      const buckets = range.ms / bucketMs[range.bucket]!;
      expect(buckets, range.key).toBeLessThanOrEqual(200);
      expect(buckets, range.key).toBeGreaterThanOrEqual(50);
    }
  });

  it('falls back to the last hour for an unknown key', () => {
    expect(chartRange('6h').bucket).toBe('5m');
    expect(chartRange('nonsense').key).toBe('1h');
    expect(chartRange(undefined).key).toBe('1h');
  });

  it('ends the window now', () => {
    const now = Date.parse('2026-11-25T10:00:00.000Z');
    expect(rangeQuery(chartRange('1h'), now)).toEqual({ since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T10:00:00.000Z', bucket: '1m' });
  });
});

describe('toSeries', () => {
  it('turns counts per bucket into rates per minute, oldest first, keeping latency gaps', () => {
    const series = toSeries({
      destinationId: 'crm',
      bucketMs: 10_000,
      buckets: [
        { at: '2026-11-25T10:00:10.000Z', attempts: 0, delivered: 0, failed: 0, deferred: 0, deliveryP50Ms: null, deliveryP95Ms: null },
        { at: '2026-11-25T10:00:00.000Z', attempts: 2, delivered: 1, failed: 1, deferred: 3, deliveryP50Ms: 40, deliveryP95Ms: 90 },
      ],
    });
    expect(series).toEqual({
      times: [Date.parse('2026-11-25T10:00:00.000Z') / 1000, Date.parse('2026-11-25T10:00:10.000Z') / 1000],
      attemptsPerMin: [12, 0],
      deliveredPerMin: [6, 0],
      failedPerMin: [6, 0],
      deferredPerMin: [18, 0],
      p50Ms: [40, null],
      p95Ms: [90, null],
    });
    expect(hasTraffic(series)).toBe(true);
  });

  it('knows when there is nothing to draw', () => {
    expect(hasTraffic(toSeries({ destinationId: 'crm', bucketMs: 60_000, buckets: [] }))).toBe(false);
  });
});
