/**
 * A source that amplifies, against a running pipeline (`npm start`): one source sends messages
 * near the 32 KB limit to many destinations while another source's trickle goes on, and the
 * trickle's latency is reported every 5 s. Not a benchmark with a verdict — a probe of the case
 * the router's byte-bounded transactions and the overflow lane's placement were made for
 * (ANALYSIS.md, "a source that amplifies"). Compiled with the bench; run it with the pipeline up:
 *
 *   npm start            # in another terminal
 *   npx tsc -p test/bench && node .tributary/bench/amplify-probe.js [--destinations=10] [--messages=3000]
 *
 * It creates (PUT, idempotent) the sources `amp` and `calm`, destinations `amp-0`… and `calm-1`,
 * all pointing at a receiver it starts on 127.0.0.1:8097; ADMIN_TOKEN and the addresses are
 * `npm start`'s defaults unless set in the environment.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const option = (name: string, fallback: number): number => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given ? Number(given.slice(name.length + 3)) : fallback;
};
const DESTINATIONS = option('destinations', 10);
const MESSAGES = option('messages', 3_000);
const PER_REQUEST = 15;
const INGEST = process.env.INGEST_URL ?? 'http://127.0.0.1:8080';
const ROUTER_METRICS = process.env.ROUTER_METRICS_URL ?? 'http://127.0.0.1:9101/metrics';
const RECEIVER_PORT = 8097;
const admin = { authorization: `Bearer ${process.env.ADMIN_TOKEN ?? 'tributary-local-admin'}`, 'content-type': 'application/json' };
const basic = (writeKey: string): string => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;

// Events of an earlier run (retried into this run's receiver) are not this run's latency.
const probeStarted = Date.now();
let wideDelivered = 0;
const trickleLatencies: number[] = [];
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.url === '/calm') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { properties: { sentAt: number } };
      if (body.properties.sentAt >= probeStarted) trickleLatencies.push(Date.now() - body.properties.sentAt);
    } else wideDelivered++;
    response.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(RECEIVER_PORT, '127.0.0.1', resolve));

async function put(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${INGEST}/admin/v1/${path}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`PUT ${path}: ${response.status} ${await response.text()}`);
}
const webhook = (path: string) => ({ type: 'webhooks', settings: { sharedSecret: 'probe-secret', webhooks: [{ url: `http://127.0.0.1:${RECEIVER_PORT}/${path}` }] } });
await put('sources/amp', { name: 'amplifying', writeKey: 'wk_amplify_probe' });
await put('sources/calm', { name: 'calm', writeKey: 'wk_calm_probe_1' });
for (let index = 0; index < DESTINATIONS; index++) await put(`destinations/amp-${index}`, { ...webhook(`amp/${index}`), sources: ['amp'] });
await put('destinations/calm-1', { ...webhook('calm'), sources: ['calm'] });
await sleep(2_000);

let trickleSent = 0;
const trickle = setInterval(() => {
  trickleSent++;
  const body = JSON.stringify({ userId: 'calm-user', event: 'Tick', properties: { sentAt: Date.now() } });
  fetch(`${INGEST}/v1/track`, { method: 'POST', headers: { authorization: basic('wk_calm_probe_1'), 'content-type': 'application/json' }, body }).catch(() => undefined);
}, 100);
await sleep(5_000);
const baseline = trickleLatencies.splice(0);

const pad = 'x'.repeat(30_000);
const started = Date.now();
let sent = 0;
let refused = 0;
while (sent < MESSAGES) {
  const batch = Array.from({ length: PER_REQUEST }, (_, index) => ({ type: 'track', event: 'Large', userId: `u${index}`, properties: { pad } }));
  const response = await fetch(`${INGEST}/v1/batch`, { method: 'POST', headers: { authorization: basic('wk_amplify_probe'), 'content-type': 'application/json' }, body: JSON.stringify({ batch }) });
  if (response.ok) sent += PER_REQUEST;
  else {
    refused++;
    await sleep(100);
  }
}

const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
const summary = (values: number[]): string => (values.length === 0 ? 'none' : `p50 ${quantile(values, 0.5)} / p99 ${quantile(values, 0.99)} / max ${Math.max(...values)} ms (${values.length})`);
console.log(`trickle alone: ${summary(baseline)}`);
console.log(`${sent} messages of 30 KB to ${DESTINATIONS} destinations sent in ${((Date.now() - started) / 1000).toFixed(1)} s (${refused} requests refused and sent again)`);
const expected = sent * DESTINATIONS;
for (let report = 0; report < 60 && wideDelivered < expected; report++) {
  await sleep(5_000);
  const metrics = await (await fetch(ROUTER_METRICS)).text();
  const rss = Number(/^process_resident_memory_bytes(?:\{[^}]*\})? (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
  console.log(`${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s: ${wideDelivered} of ${expected} wide deliveries; trickle ${summary(trickleLatencies.splice(0))}; router RSS ${(rss / 2 ** 20).toFixed(0)} MB`);
}
trickleLatencies.splice(0);
await sleep(5_000);
clearInterval(trickle);
console.log(`trickle: ${trickleSent} sent; in the 5 s after the wide deliveries: ${summary(trickleLatencies)}`);
receiver.close();
process.exit(wideDelivered >= expected ? 0 : 1);
