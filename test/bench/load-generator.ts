/**
 * The load generator, in its own process (forked by the orchestrator, steered over IPC):
 * open loop — batches are due on a fixed schedule for the offered rate and are sent when
 * due, whether or not earlier ones have been answered — with at most MAX_IN_FLIGHT
 * requests open. A batch that finds every connection busy waits for one and is counted as
 * late when it leaves more than LATE_MS after its due time, so a generator (or an ingest)
 * that cannot keep up shows instead of silently lowering the rate.
 *
 * Each message's `properties.sentAtMs` is the time its request was sent; answers are
 * counted per batch: 200 = accepted (the batch number is kept for the loss check).
 */
import { Pool } from 'undici';
import { BitSet } from './bitset.js';
import { LatencyHistogram } from './histogram.js';
import { BATCH_SIZE, batchBody, preciseNow } from './messages.js';
import type { GeneratorCommand, GeneratorReport } from './protocol.js';

const MAX_IN_FLIGHT = 32;
const LATE_MS = 100;
const TICK_MS = 2;

/** Events per request: 100 by default; the noisy-neighbour scenario's trickle sends one per request, as an app would. */
const batchSize = Number(process.env.BENCH_BATCH_SIZE ?? BATCH_SIZE);
const ingestUrl = process.env.BENCH_INGEST_URL;
const writeKey = process.env.BENCH_WRITE_KEY;
if (!ingestUrl || !writeKey || !process.send) throw new Error('the generator runs as a forked child with BENCH_INGEST_URL and BENCH_WRITE_KEY set');
const report = (message: GeneratorReport): void => void process.send!(message);

const pool = new Pool(ingestUrl, { connections: MAX_IN_FLIGHT, pipelining: 1, keepAliveTimeout: 60_000 });
const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;

const acceptedBatches = new BitSet();
const refusedByStatus: Record<string, number> = {};
interface PhaseCounts {
  sentEvents: number;
  acceptedEvents: number;
  lateEvents: number;
  requestLatency: LatencyHistogram;
}
const phases = new Map<string, PhaseCounts>();
let nextBatch = 0;
let inFlight = 0;

/** The schedule of the current rate: batches due since `origin`, and those due but not sent yet. */
let rate = 0;
let phase = '';
let origin = 0;
let scheduled = 0;
const due: Array<{ at: number; phase: string }> = [];

let windowStart = Date.now();
let window = { sent: 0, sentLate: 0, accepted: 0, refused: 0 };
let windowLatency = new LatencyHistogram();

function phaseCounts(name: string): PhaseCounts {
  let counts = phases.get(name);
  if (!counts) phases.set(name, (counts = { sentEvents: 0, acceptedEvents: 0, lateEvents: 0, requestLatency: new LatencyHistogram() }));
  return counts;
}

async function send(dueAt: number, tag: string): Promise<void> {
  const batch = nextBatch++;
  const sentAt = preciseNow();
  const stats = phaseCounts(tag);
  const late = sentAt - dueAt > LATE_MS;
  window.sent += batchSize;
  stats.sentEvents += batchSize;
  if (late) {
    window.sentLate += batchSize;
    stats.lateEvents += batchSize;
  }
  let status: string;
  try {
    const response = await pool.request({
      path: '/v1/batch',
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: batchBody(batch, sentAt, tag, batchSize),
    });
    await response.body.dump();
    status = String(response.statusCode);
  } catch {
    status = 'error';
  }
  const latencyMs = preciseNow() - sentAt;
  windowLatency.record(latencyMs);
  stats.requestLatency.record(latencyMs);
  if (status === '200') {
    acceptedBatches.add(batch);
    window.accepted += batchSize;
    stats.acceptedEvents += batchSize;
  } else {
    window.refused += batchSize;
    refusedByStatus[status] = (refusedByStatus[status] ?? 0) + 1;
  }
}

function tick(): void {
  if (rate > 0) {
    const intervalMs = (1000 * batchSize) / rate;
    const now = preciseNow();
    while (origin + scheduled * intervalMs <= now) due.push({ at: origin + scheduled++ * intervalMs, phase });
  }
  while (due.length > 0 && inFlight < MAX_IN_FLIGHT) {
    const next = due.shift()!;
    inFlight++;
    void send(next.at, next.phase).finally(() => {
      inFlight--;
    });
  }
}

setInterval(tick, TICK_MS);

function reportWindow(): void {
  const now = Date.now();
  report({ kind: 'window', fromMs: windowStart, toMs: now, ...window, queued: due.length, requestLatency: windowLatency.toJSON() });
  windowStart = now;
  window = { sent: 0, sentLate: 0, accepted: 0, refused: 0 };
  windowLatency = new LatencyHistogram();
}
setInterval(reportWindow, 1000);

process.on('message', (command: GeneratorCommand) => {
  if (command.kind === 'rate') {
    // Batches already due keep their places; the new schedule starts now.
    rate = command.rate;
    phase = command.phase;
    origin = preciseNow();
    scheduled = 0;
    return;
  }
  if (command.kind === 'flush') return reportWindow();
  report({
    kind: 'final',
    acceptedBatches: acceptedBatches.toBase64(),
    batchesSent: nextBatch,
    refusedByStatus,
    phases: Object.fromEntries([...phases].map(([name, counts]) => [name, { ...counts, requestLatency: counts.requestLatency.toJSON() }])),
  });
});
process.on('disconnect', () => process.exit(0));
