/**
 * The webhook receiver, in its own process (forked by the orchestrator, reporting over IPC):
 * answers 200 as soon as a request's body is in, then reads the messageId and the
 * generator's `sentAtMs` from the body, checks X-Signature, and counts first arrivals,
 * duplicates and latency (client send → arrival). Requests on /limit come from the HTTP
 * limit probe: the same work, counted apart.
 *
 * The signature is checked on every request with node:crypto directly, not with the
 * dispatcher's signing module, so a fault there would show here as invalid signatures.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BitSet } from './bitset.js';
import { LatencyHistogram } from './histogram.js';
import { preciseNow, readArrival } from './messages.js';
import type { ReceiverCommand, ReceiverReport } from './protocol.js';

const secret = process.env.BENCH_SHARED_SECRET;
if (!secret || !process.send) throw new Error('the receiver runs as a forked child with BENCH_SHARED_SECRET set');
const report = (message: ReceiverReport): void => void process.send!(message);

const delivered = new BitSet(new Uint8Array(1 << 16));
const phases = new Map<string, LatencyHistogram>();
const signatures = { valid: 0, invalid: 0, missing: 0 };
let duplicates = 0;
let foreign = 0;
let limitRequests = 0;
let sampleSent = false;

let windowStart = Date.now();
let windowDelivered = 0;
let windowDuplicates = 0;
let windowLatency = new LatencyHistogram();

function checkSignature(body: Buffer, header: string | string[] | undefined): keyof typeof signatures {
  const given = Array.isArray(header) ? header[0] : header;
  if (!given) return 'missing';
  const expected = createHmac('sha1', secret!).update(body).digest();
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected) ? 'valid' : 'invalid';
}

function onWebhook(request: IncomingMessage, body: Buffer, at: number): void {
  const signature = request.headers['x-signature'];
  signatures[checkSignature(body, signature)]++;
  let arrival;
  try {
    arrival = readArrival(body.toString('utf8'));
  } catch {
    foreign++;
    return;
  }
  if (request.url === '/limit') {
    limitRequests++;
    return;
  }
  if (arrival.seq === undefined || arrival.sentAtMs === undefined) {
    foreign++;
    return;
  }
  if (!sampleSent && typeof signature === 'string') {
    sampleSent = true;
    report({ kind: 'sample', body: body.toString('utf8'), signature });
  }
  if (!delivered.add(arrival.seq)) {
    duplicates++;
    windowDuplicates++;
    return;
  }
  const latencyMs = at - arrival.sentAtMs;
  windowDelivered++;
  windowLatency.record(latencyMs);
  const phase = arrival.phase ?? '(none)';
  let histogram = phases.get(phase);
  if (!histogram) phases.set(phase, (histogram = new LatencyHistogram()));
  histogram.record(latencyMs);
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = preciseNow();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    onWebhook(request, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), at);
  });
});
server.keepAliveTimeout = 60_000;

function reportWindow(): void {
  const now = Date.now();
  report({ kind: 'window', fromMs: windowStart, toMs: now, delivered: windowDelivered, duplicates: windowDuplicates, latency: windowLatency.toJSON() });
  windowStart = now;
  windowDelivered = 0;
  windowDuplicates = 0;
  windowLatency = new LatencyHistogram();
}
setInterval(reportWindow, 1000);

process.on('message', (command: ReceiverCommand) => {
  if (command.kind === 'flush') return reportWindow();
  report({
    kind: 'final',
    delivered: delivered.toBase64(),
    deliveredCount: delivered.size,
    duplicates,
    foreign,
    signatures,
    phases: Object.fromEntries([...phases].map(([phase, histogram]) => [phase, histogram.toJSON()])),
    limitRequests,
  });
});
// The orchestrator going away ends the receiver too.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => report({ kind: 'listening', port: (server.address() as AddressInfo).port }));
