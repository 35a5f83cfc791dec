/**
 * `npm run bench -- --scenario=audience-sync [--members=1000000] [--joined=10000] [--left=5000] [--ingest-heap-mb=N]`:
 * a Personas audience at full size through the real ingest and the `tributary` CLI. A first
 * sync of N members from an NDJSON file, then a second snapshot with some joined and some
 * left; for each, the time taken, the Identify messages written (counted on the ingest topic,
 * exactly) and ingest's peak RSS (VmHWM) — which must stay within 256 MB.
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { acquireStack } from '@tributary/deploy/acquire';
import { INGEST_MAX_OLD_SPACE_MB } from '@tributary/deploy/service-env';
import { topicNames, type IngestMessage } from '@tributary/schemas';
import { AvroCodec, createKafka, createLogger, scanTopicMessages } from '@tributary/shared';
import { REPO_ROOT, startService } from '../harness/services.js';
import { ADMIN_TOKEN, adminCaller, benchServiceEnv, deleteNamespace } from './pipeline.js';

export interface AudienceBenchOptions {
  members: number;
  joined: number;
  left: number;
  /** Ingest's V8 old-space bound; 0: none (V8's own default). */
  ingestHeapMb: number;
}

export function parseAudienceOptions(argv: string[]): AudienceBenchOptions {
  const { values } = parseArgs({
    args: argv.filter((arg) => !arg.startsWith('--scenario=')),
    options: { members: { type: 'string' }, joined: { type: 'string' }, left: { type: 'string' }, 'ingest-heap-mb': { type: 'string' } },
  });
  const count = (text: string | undefined, fallback: number) => {
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(value) || value < 0) throw new Error(`not a count: ${text}`);
    return value;
  };
  const heap = values['ingest-heap-mb'];
  // By default ingest runs as `npm start` runs it (its heap bounded); --ingest-heap-mb=0 lifts the bound.
  return { members: count(values.members, 1_000_000), joined: count(values.joined, 10_000), left: count(values.left, 5_000), ingestHeapMb: count(heap, INGEST_MAX_OLD_SPACE_MB) };
}

const say = (line: string) => process.stdout.write(`[audience-sync] ${line}\n`);

async function writeSnapshot(path: string, from: number, to: number): Promise<void> {
  const out = createWriteStream(path);
  for (let index = from; index < to; index++) {
    if (!out.write(`{"userId":"member-${index}"}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

function cli(ingestUrl: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'clients', 'cli', 'dist', 'cli.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', TRIBUTARY_URL: ingestUrl, TRIBUTARY_ADMIN_TOKEN: ADMIN_TOKEN }, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim())),
    );
  });
}

export async function runAudienceBench(options: AudienceBenchOptions): Promise<void> {
  const stack = await acquireStack({ log: (line) => say(`stack: ${line}`) });
  const namespace = `audience-${Date.now().toString(36)}`;
  const topics = topicNames(namespace);
  const logger = createLogger({ service: 'bench', level: 'warn' });
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'tributary-bench-audience', logger });
  const codec = new AvroCodec({ registryUrl: stack.registryUrl, logger });
  const dir = mkdtempSync(join(tmpdir(), 'tributary-audience-bench-'));
  // --ingest-heap-mb caps ingest's V8 heap, as npm start does and a container memory limit would.
  const extra: Record<string, string> = options.ingestHeapMb > 0 ? { NODE_OPTIONS: `--max-old-space-size=${options.ingestHeapMb}` } : {};
  const ingest = await startService('ingest', { env: benchServiceEnv(stack, namespace, { logLevel: 'warn', partitions: undefined }, extra), readyTimeoutMs: 90_000 });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await adminCaller(ingest.url)('PUT', '/sources/crm', { name: 'CRM', writeKey: `wk_${namespace}` });
    const first = join(dir, 'first.ndjson');
    const second = join(dir, 'second.ndjson');
    // Second snapshot: the first `left` members gone, `joined` new ones after the last.
    await writeSnapshot(first, 0, options.members);
    await writeSnapshot(second, options.left, options.members + options.joined);
    const rssBefore = peakRssMb(ingest.process.pid!);

    for (const [label, file] of [['first sync', first], ['second sync', second]] as const) {
      const started = Date.now();
      const line = await cli(ingest.url, ['audience', 'sync', 'Bench Audience', file, '--source', 'crm']);
      say(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s — ${line}; ingest peak RSS so far ${peakRssMb(ingest.process.pid!).toFixed(0)} MB`);
    }

    // Count what reached the ingest topic, exactly, by trait value.
    const counted = { joined: 0, left: 0 };
    await scanTopicMessages({ kafka, topic: topics.ingestOverflow, groupId: `${namespace}-count`, since: undefined, timeoutMs: 600_000 }, async (_partition, message) => {
      const decoded = await codec.decode<IngestMessage>('ingest', message.value);
      if (decoded.type !== 'identify') return;
      if (decoded.traits === '{"bench_audience":true}') counted.joined++;
      else if (decoded.traits === '{"bench_audience":false}') counted.left++;
    });
    const expectedJoined = options.members + options.joined;
    say(`Identify messages on the ingest topic: ${counted.joined} with the trait true (expected ${expectedJoined}), ${counted.left} with false (expected ${options.left})`);
    say(`ingest RSS: ${rssBefore.toFixed(0)} MB peak before the syncs, ${peakRssMb(ingest.process.pid!).toFixed(0)} MB peak after (limit 256 MB)`);
    if (counted.joined !== expectedJoined || counted.left !== options.left) process.exitCode = 1;
  } finally {
    await ingest.stop();
    await deleteNamespace(admin, namespace).catch(() => undefined);
    await admin.disconnect();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
