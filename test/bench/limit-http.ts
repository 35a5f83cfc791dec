/**
 * HTTP limit probe, in its own process: how many POSTs a second one Node process with an
 * undici Pool gets answered by the same receiver, with the webhook body the pipeline
 * delivered (same bytes, same X-Signature) and as many connections as the dispatcher opens
 * per destination. Closed loop at full concurrency: every answer starts the next request.
 * The first WARMUP_MS are not counted (connections opening, JIT).
 */
import { Pool } from 'undici';
import { LatencyHistogram } from './histogram.js';
import { preciseNow } from './messages.js';
import type { HttpLimitResult } from './protocol.js';

const WARMUP_MS = 2000;

const url = process.env.BENCH_LIMIT_URL;
const body = process.env.BENCH_LIMIT_BODY;
const signature = process.env.BENCH_LIMIT_SIGNATURE;
const seconds = Number(process.env.BENCH_LIMIT_SECONDS);
const connections = Number(process.env.BENCH_LIMIT_CONNECTIONS);
if (!url || !body || !signature || !(seconds > 0) || !(connections > 0) || !process.send) {
  throw new Error('the HTTP limit probe runs as a forked child with BENCH_LIMIT_{URL,BODY,SIGNATURE,SECONDS,CONNECTIONS} set');
}

const target = new URL(url);
const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
const headers = { 'content-type': 'application/json', 'user-agent': 'Tributary/1.0', 'x-signature': signature };
const latency = new LatencyHistogram();
const started = preciseNow();
const countFrom = started + WARMUP_MS;
const stopAt = countFrom + seconds * 1000;
let requests = 0;
let errors = 0;

async function worker(): Promise<void> {
  while (preciseNow() < stopAt) {
    const sentAt = preciseNow();
    try {
      const response = await pool.request({ path: target.pathname, method: 'POST', headers, body });
      await response.body.dump();
      if (sentAt >= countFrom) {
        if (response.statusCode === 200) requests++;
        else errors++;
        latency.record(preciseNow() - sentAt);
      }
    } catch {
      if (sentAt >= countFrom) errors++;
    }
  }
}

await Promise.all(Array.from({ length: connections }, () => worker()));
await pool.close();
const result: HttpLimitResult = {
  kind: 'http-limit',
  seconds,
  connections,
  requests,
  requestsPerSecond: requests / seconds,
  errors,
  latency: latency.toJSON(),
};
process.send(result);
// Stay until the orchestrator has read this process's CPU time and stops it.
process.on('disconnect', () => process.exit(0));
process.on('message', () => process.exit(0));
