import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TallyCounter, TallyHistogram } from './tally-metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function registry(): Registry {
  const made = new Registry();
  made.setDefaultLabels({ service: 'test' });
  return made;
}

/** Observations: label values from a small set (so series repeat), values across and on the bounds. */
const observations = fc.array(
  fc.record({
    outcome: fc.constantFrom('success', 'timeout', 'a "quoted"\\ value\n'),
    value: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS), fc.constant(0)),
  }),
  { maxLength: 60 },
);

describe('TallyHistogram', () => {
  it('exposes what prom-client’s Histogram exposes for the same observations, text and JSON', async () => {
    await fc.assert(
      fc.asyncProperty(observations, async (observed) => {
        const theirs = registry();
        const ours = registry();
        const reference = new Histogram({ name: 'h_seconds', help: 'help', labelNames: ['outcome'], buckets: BUCKETS, registers: [theirs] });
        const tally = new TallyHistogram({ name: 'h_seconds', help: 'help', labelNames: ['outcome'], buckets: BUCKETS, registry: ours });
        const children = new Map<string, ReturnType<TallyHistogram['child']>>();
        for (const { outcome, value } of observed) {
          reference.labels(outcome).observe(value);
          let child = children.get(outcome);
          if (!child) children.set(outcome, (child = tally.child(outcome)));
          child.observe(value);
        }
        expect(await ours.metrics()).toBe(await theirs.metrics());
        // prom-client adds an `exemplar` (null) to each value, exemplars being off.
        const withoutExemplars = (await theirs.getMetricsAsJSON()).map((metric) => ({
          ...metric,
          values: metric.values.map((value) => Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'exemplar'))),
        }));
        expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars);
      }),
      { numRuns: 200 },
    );
  });

  it('without labels, shows its zero series before the first observation, as prom-client does', async () => {
    const theirs = registry();
    const ours = registry();
    new Histogram({ name: 'latency_seconds', help: 'h', buckets: [0.1, 1], registers: [theirs] });
    const tally = new TallyHistogram({ name: 'latency_seconds', help: 'h', buckets: [0.1, 1], registry: ours });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    tally.child().observe(0.5);
    expect(await ours.metrics()).toContain('latency_seconds_bucket{le="1",service="test"} 1');
  });

  it('keeps counting through children handed out before a reset', async () => {
    const ours = registry();
    const tally = new TallyHistogram({ name: 'r_seconds', help: 'h', labelNames: ['outcome'], buckets: [1], registry: ours });
    const child = tally.child('success');
    child.observe(0.5);
    ours.resetMetrics();
    child.observe(2);
    const text = await ours.metrics();
    expect(text).toContain('r_seconds_bucket{le="1",service="test",outcome="success"} 0');
    expect(text).toContain('r_seconds_count{service="test",outcome="success"} 1');
  });

  it('refuses what prom-client refuses: a value that is not finite, the wrong number of label values, a name taken', () => {
    const ours = registry();
    const tally = new TallyHistogram({ name: 'x_seconds', help: 'h', labelNames: ['outcome'], buckets: [1], registry: ours });
    expect(() => tally.child('success').observe(Number.NaN)).toThrow(/not a finite value/);
    expect(() => tally.child()).toThrow(/expected 1 label values/);
    expect(() => new TallyHistogram({ name: 'x_seconds', help: 'h', buckets: [1], registry: ours })).toThrow(/already been registered/);
    expect(() => new TallyHistogram({ name: 'y_seconds', help: 'h', buckets: [1, 1], registry: ours })).toThrow(/increasing/);
  });
});

describe('TallyCounter', () => {
  it('exposes what prom-client’s Counter exposes, across scrapes taken between increments', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.record({ destination: fc.constantFrom('d1', 'd2'), result: fc.constantFrom('delivered', 'retry'), by: fc.nat(5) }), fc.constant('scrape' as const)), { maxLength: 40 }),
        async (steps) => {
          const theirs = registry();
          const ours = registry();
          const reference = new Counter({ name: 'c_total', help: 'help', labelNames: ['destination', 'result'], registers: [theirs] });
          const tally = new TallyCounter({ name: 'c_total', help: 'help', labelNames: ['destination', 'result'], registry: ours });
          for (const step of steps) {
            if (step === 'scrape') {
              expect(await ours.metrics()).toBe(await theirs.metrics());
              continue;
            }
            reference.labels(step.destination, step.result).inc(step.by);
            tally.child(step.destination, step.result).inc(step.by);
          }
          expect(await ours.metrics()).toBe(await theirs.metrics());
          expect(await ours.metrics()).toBe(await theirs.metrics());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses to go down, and label values prom-client would refuse', () => {
    const tally = new TallyCounter({ name: 'd_total', help: 'h', labelNames: ['result'], registry: registry() });
    expect(() => tally.child('delivered').inc(-1)).toThrow(/only goes up/);
    expect(() => tally.child('delivered', 'extra')).toThrow();
  });
});
