// What the dispatcher's Prometheus series cost per delivered delivery: the five calls it makes
// (delivery latency, request duration, attempts, settled, settled per destination) through
// prom-client's labelled children, as until 28 November 2026, against the same calls through
// shared `TallyHistogram` / `TallyCounter` children. Rounds alternate, so that neither runs on a
// cooler machine; a scrape every 100,000 deliveries, as a scrape every few seconds would see.
// Build shared first (npx turbo run build), then:
//   node test/bench/tools/metric-calls.mjs [deliveries=2000000] [rounds=5]
import { createRequire } from 'node:module';
import { DELIVERY_LATENCY_BUCKETS, LATENCY_BUCKETS, TallyCounter, TallyHistogram } from '../../../shared/dist/index.js';

const require = createRequire(new URL('../../../shared/package.json', import.meta.url));
const { Counter, Histogram, Registry } = require('prom-client');

const deliveries = Number(process.argv[2] ?? 2_000_000);
const rounds = Number(process.argv[3] ?? 5);
const destinations = Array.from({ length: 50 }, (_, index) => `dst_${String(index).padStart(24, '0')}`);

function registry() {
  const made = new Registry();
  made.setDefaultLabels({ service: 'dispatcher' });
  return made;
}

function promClientSeries() {
  const registers = [registry()];
  const latency = new Histogram({ name: 'l', help: 'h', buckets: DELIVERY_LATENCY_BUCKETS, registers });
  const duration = new Histogram({ name: 'd', help: 'h', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registers }).labels('success');
  const attempts = new Counter({ name: 'a', help: 'h', labelNames: ['outcome', 'status_class'], registers }).labels('success', '2xx');
  const settled = new Counter({ name: 's', help: 'h', labelNames: ['result'], registers }).labels('delivered');
  const perDestination = new Counter({ name: 'p', help: 'h', labelNames: ['destination', 'result'], registers });
  const own = destinations.map((destination) => perDestination.labels(destination, 'delivered'));
  return { registry: registers[0], latency, duration, attempts, settled, own };
}

function tallySeries() {
  const made = registry();
  const latency = new TallyHistogram({ name: 'l', help: 'h', buckets: DELIVERY_LATENCY_BUCKETS, registry: made }).child();
  const duration = new TallyHistogram({ name: 'd', help: 'h', labelNames: ['outcome'], buckets: LATENCY_BUCKETS, registry: made }).child('success');
  const attempts = new TallyCounter({ name: 'a', help: 'h', labelNames: ['outcome', 'status_class'], registry: made }).child('success', '2xx');
  const settled = new TallyCounter({ name: 's', help: 'h', labelNames: ['result'], registry: made }).child('delivered');
  const perDestination = new TallyCounter({ name: 'p', help: 'h', labelNames: ['destination', 'result'], registry: made });
  const own = destinations.map((destination) => perDestination.child(destination, 'delivered'));
  return { registry: made, latency, duration, attempts, settled, own };
}

async function time(series) {
  const started = performance.now();
  for (let i = 0; i < deliveries; i++) {
    const seconds = (i % 997) / 10_000;
    series.duration.observe(seconds);
    series.attempts.inc();
    series.latency.observe(seconds * 3);
    series.settled.inc();
    series.own[i % destinations.length].inc();
    if (i % 100_000 === 99_999) await series.registry.metrics();
  }
  return (1e6 * (performance.now() - started)) / deliveries;
}

const made = { 'prom-client children': promClientSeries(), 'tally children': tallySeries() };
for (const series of Object.values(made)) await time(series);
const runs = Object.fromEntries(Object.keys(made).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) for (const [name, series] of Object.entries(made)) runs[name].push(await time(series));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, values] of Object.entries(runs)) console.log(`${name.padEnd(22)} ${median(values).toFixed(0).padStart(5)} ns per delivery (median of ${rounds}; ${values.map((v) => v.toFixed(0)).join(' ')})`);
console.log(`ratio ${(median(runs['prom-client children']) / median(runs['tally children'])).toFixed(1)}× (${deliveries.toLocaleString('en')} deliveries a round, a scrape every 100,000)`);
const [theirs, ours] = await Promise.all(Object.values(made).map((series) => series.registry.metrics()));
if (theirs !== ours) throw new Error('the two registries expose different text for the same calls');
