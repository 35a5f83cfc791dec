import { describe, expect, it } from 'vitest';
import type { MetricDefinition } from './metrics.js';
import { selectorProblems, seriesSelectors } from './promql.js';

describe('seriesSelectors', () => {
  it('finds metric names and their matcher labels, not functions, keywords or label lists', () => {
    const expr =
      'histogram_quantile(0.99, sum by (namespace, le) (rate(tributary_delivery_latency_seconds_bucket{service=~"$service", le!="+Inf"}[$__rate_interval])))';
    expect(seriesSelectors(expr)).toEqual([{ name: 'tributary_delivery_latency_seconds_bucket', matcherLabels: ['service', 'le'] }]);
  });

  it('handles aggregation clauses after the expression, vector matching and bare names', () => {
    const expr =
      'sum(rate(a_total{status=~"5.."}[5m])) without (pod) / on (namespace) group_left (x) sum(rate(b_total[5m] offset 1h)) > bool 0 and up == 0';
    expect(seriesSelectors(expr).map((s) => s.name)).toEqual(['a_total', 'b_total', 'up']);
  });

  it('ignores label values that look like names, durations, numbers and Grafana variables', () => {
    const expr = 'max(c{topic!~".*[.]retry[.].*", route="track"}) > 1e3 or d[1h:5m] * $__interval_ms';
    expect(seriesSelectors(expr)).toEqual([
      { name: 'c', matcherLabels: ['topic', 'route'] },
      { name: 'd', matcherLabels: [] },
    ]);
  });

  it('reads recording-rule names with colons', () => {
    expect(seriesSelectors('tributary:delivery_latency_seconds:p99_5m > 60')).toEqual([
      { name: 'tributary:delivery_latency_seconds:p99_5m', matcherLabels: [] },
    ]);
  });
});

describe('selectorProblems', () => {
  const metrics: MetricDefinition[] = [
    { name: 'x_seconds', type: 'histogram', labels: ['tier'], services: ['dispatcher'] },
    { name: 'y_total', type: 'counter', labels: ['reason'], services: ['dispatcher'] },
  ];

  it('accepts known names, histogram series with le on buckets, target labels and recorded names', () => {
    expect(selectorProblems({ name: 'x_seconds_bucket', matcherLabels: ['le', 'tier', 'service', 'namespace'] }, metrics)).toEqual([]);
    expect(selectorProblems({ name: 'x_seconds_count', matcherLabels: [] }, metrics)).toEqual([]);
    expect(selectorProblems({ name: 'up', matcherLabels: ['job'] }, metrics)).toEqual([]);
    expect(selectorProblems({ name: 'r:x:p99', matcherLabels: [] }, metrics, new Set(['r:x:p99']))).toEqual([]);
  });

  it('names unknown metrics, bare histograms and unknown labels', () => {
    expect(selectorProblems({ name: 'z_total', matcherLabels: [] }, metrics)).toEqual(['unknown metric z_total']);
    expect(selectorProblems({ name: 'x_seconds', matcherLabels: [] }, metrics)[0]).toMatch(/is a histogram/);
    expect(selectorProblems({ name: 'y_total_bucket', matcherLabels: [] }, metrics)).toEqual(['unknown metric y_total_bucket']);
    expect(selectorProblems({ name: 'y_total', matcherLabels: ['reason', 'le', 'tier'] }, metrics)).toEqual([
      'y_total has no label le',
      'y_total has no label tier',
    ]);
  });
});
