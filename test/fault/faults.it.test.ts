/**
 * Fault injection against the whole pipeline on a private broker and registry: what happens
 * when processes die, the broker goes away, the registry stops answering, records no one can
 * read appear on every topic, and a client attacks ingest. Each test states what was accepted, lost (must be 0) and
 * duplicated, and the suite prints the figures.
 *
 * The broker outage lasts FAULT_OUTAGE_SECONDS (45 s here; the closing note's run used 180).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { topicNames, type Delivery } from '@tributary/schemas';
import { AvroCodec, createKafka, createLogger, createProducer, ladderTiers, type RetryLadder } from '@tributary/shared';
import type { RunningStack } from '@tributary/deploy/local-stack';
import { eventually, metricValue, readTopicToEnd, testDelivery, uniqueNamespace } from '../harness/index.js';
import { account, ADMIN_TOKEN, adminClient, CountingReceiver, drain, Load, SERVICES, startPrivateStack, Supervisor } from './fault-pipeline.js';

const OUTAGE_SECONDS = Number(process.env.FAULT_OUTAGE_SECONDS ?? 45);
const RATE = 400;
/** How long the registry is frozen (SIGSTOP) in its test. */
const FREEZE_SECONDS = 20;
const FREEZE_KILL_AFTER_SECONDS = 6;
/** One-event requests a second beside the batches in the outage test. */
const SINGLE_RATE = 20;
const ladder: RetryLadder = { delaysMs: [1_000, 5_000], windowMs: 600_000 };
const namespace = uniqueNamespace('fault');
const topics = topicNames(namespace);
const WRITE_KEY = `wk_${namespace}`;
const logger = createLogger({ service: 'fault-test', level: 'warn' });

let stack: RunningStack;
let removeStack: () => Promise<void>;
let supervisor: Supervisor;
let receiver: CountingReceiver;
const figures: string[] = [];

const say = (line: string) => {
  figures.push(line);
  process.stdout.write(`[fault] ${line}\n`);
};

beforeAll(async () => {
  ({ stack, remove: removeStack } = await startPrivateStack((line) => process.stderr.write(`[fault stack] ${line}\n`)));
  receiver = new CountingReceiver();
  await receiver.start();
  supervisor = new Supervisor({
    KAFKA_BROKERS: stack.brokers.join(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    TOPIC_NAMESPACE: namespace,
    KAFKA_TOPIC_PARTITIONS: '3',
    ADMIN_TOKEN,
    RETRY_LADDER: ladder.delaysMs.map((ms) => `${ms}ms`).join(','),
    RETRY_WINDOW: `${ladder.windowMs}ms`,
    // A killed member's partitions move after this long (the default is 30 s).
    ROUTER_SESSION_TIMEOUT: '8s',
    RETRY_SCHEDULER_SESSION_TIMEOUT: '8s',
    DELIVERY_SESSION_TIMEOUT: '8s',
    // Several tier scans fall inside the broker outage: a scan the broker cannot answer must
    // leave the retry-scheduler running (the default 1 m may fall before or after it).
    RETRY_SCHEDULER_TIER_SCAN_INTERVAL: '5s',
    // Short enough that the slow-trickle case does not wait the default 30 s.
    INGEST_REQUEST_TIMEOUT: '5s',
    LOG_LEVEL: 'warn',
  });
  await supervisor.start();
  const admin = adminClient(() => supervisor.service('ingest').url, ADMIN_TOKEN);
  await admin('PUT', '/sources/app', { name: 'App', writeKey: WRITE_KEY });
  await admin('PUT', '/destinations/hooks', { type: 'webhooks', sources: ['app'], settings: { webhooks: [{ url: receiver.url }] } });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
}, 300_000);

afterAll(async () => {
  await supervisor?.stop();
  await receiver?.stop();
  await removeStack?.();
  process.stdout.write(`\n[fault] figures:\n${figures.map((line) => `  ${line}`).join('\n')}\n`);
}, 120_000);

const ingestUrl = () => supervisor.service('ingest').url;

describe('faults', () => {
  it('kill -9 of each service in turn under load: nothing accepted is lost', { timeout: 300_000 }, async () => {
    const load = new Load(ingestUrl, WRITE_KEY, 'kill');
    load.start(RATE);
    const kills: Array<{ name: string; at: number }> = [];
    for (const name of SERVICES) {
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      kills.push({ name, at: Date.now() });
      await supervisor.kill(name);
    }
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await load.stop();
    const result = await drain(load, receiver, 90_000);
    // Webhooks are at-least-once: a dispatcher killed between a POST and the commit of its
    // outcome sends it again. Each repeat is put down to the first kill after the id first
    // arrived — the one that interrupted its outcome — not to the last kill before the repeat:
    // a killed member's partitions move only after its session timeout (8 s here), by when the
    // next service (6 s later) has been killed too.
    const repeatsAfter = new Map<string, number>();
    for (const { firstAt, at } of receiver.repeats) {
      const cause = kills.find((kill) => kill.at >= firstAt && kill.at <= at)?.name ?? 'none';
      repeatsAfter.set(cause, (repeatsAfter.get(cause) ?? 0) + 1);
    }
    const repeats = [...repeatsAfter].map(([name, count]) => `${count} after killing ${name}`).join(', ') || 'none';
    say(`kill -9 of ${SERVICES.join(', ')} under ${RATE}/s: ${result.accepted} accepted, ${result.delivered} delivered, ${result.lost} lost, ${result.duplicated} duplicated (${repeats}), ${load.refused} refused while ingest restarted`);
    expect(result.lost, `lost, e.g. ${result.lostSample.join(', ')}`).toBe(0);
    expect(result.accepted).toBeGreaterThan(RATE * 20);
  });

  it(`a ${OUTAGE_SECONDS}-second broker outage under load: no service exits, everything accepted arrives`, { timeout: 600_000 }, async () => {
    const load = new Load(ingestUrl, WRITE_KEY, 'outage');
    load.start(RATE);
    // Beside the batches, one event per request: ingest writes those without a transaction,
    // through a producer of their own, which must ride out the outage as well.
    const single = new Load(ingestUrl, WRITE_KEY, 'outage-single');
    single.start(SINGLE_RATE, 1);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const outageStart = Date.now();
    await stack.broker!.stop();
    const acceptedBefore = load.accepted.size;
    // While the broker is away, ingest must say so (503), not hang or accept.
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_SECONDS * 1_000));
    const acceptedDuring = load.accepted.size - acceptedBefore;
    const readyDuring = await fetch(`${ingestUrl()}/readyz`).then((response) => response.status);
    const restartBegan = Date.now();
    await stack.broker!.start();
    const restartedAt = Date.now();
    // Back to work: new messages are accepted and delivered.
    const firstAfter = await eventually(() => load.accepted.size > acceptedBefore + acceptedDuring + RATE && Date.now(), 'messages accepted after the outage', 120_000);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await Promise.all([load.stop(), single.stop()]);
    const result = await drain(load, receiver, 120_000);
    const singleResult = await drain(single, receiver, 60_000);
    // Counted over the outage, the broker's own start-up and the recovery after it.
    const exits = supervisor.exitsSince(outageStart);
    say(
      `broker down ${OUTAGE_SECONDS} s (+${((restartedAt - restartBegan) / 1000).toFixed(1)} s for it to start again) under ${RATE}/s: ` +
        `${result.accepted} accepted, ${result.lost} lost, ${result.duplicated} duplicated; ` +
        `${exits.length} service exits; ingest /readyz during the outage: ${readyDuring}; accepting again ${((firstAfter - restartedAt) / 1000).toFixed(1)} s after the broker came back; ` +
        `one-event requests beside them (${SINGLE_RATE}/s): ${singleResult.accepted} accepted, ${singleResult.lost} lost, ${singleResult.duplicated} duplicated`,
    );
    expect(exits, 'no service exited during the outage').toEqual([]);
    expect(readyDuring).toBe(503);
    expect(result.lost, `lost, e.g. ${result.lostSample.join(', ')}`).toBe(0);
    expect(singleResult.accepted).toBeGreaterThan(SINGLE_RATE * 10);
    expect(singleResult.lost, `one-event requests lost, e.g. ${singleResult.lostSample.join(', ')}`).toBe(0);
  });

  it(`a registry frozen for ${FREEZE_SECONDS} s under load, the router killed inside it: ingest keeps accepting, delivery goes on until the kill, nothing is lost`, { timeout: 300_000 }, async () => {
    const load = new Load(ingestUrl, WRITE_KEY, 'freeze');
    load.start(RATE);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const frozenAt = Date.now();
    const atFreeze = account(load, receiver);
    stack.registry!.freeze();
    let killedAt: number;
    let atKill: ReturnType<typeof account>;
    let acceptedDuring: number;
    try {
      // Every schema the running services use is cached: the registry is not asked per record.
      await new Promise((resolve) => setTimeout(resolve, FREEZE_KILL_AFTER_SECONDS * 1_000));
      atKill = account(load, receiver);
      killedAt = Date.now();
      // A service started meanwhile cannot register its schemas: it must wait, saying so, not exit.
      await supervisor.kill('router');
      await new Promise((resolve) => setTimeout(resolve, (FREEZE_SECONDS - FREEZE_KILL_AFTER_SECONDS) * 1_000));
      acceptedDuring = load.accepted.size - atFreeze.accepted;
    } finally {
      stack.registry!.thaw();
    }
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await load.stop();
    const stoppedAt = Date.now();
    const result = await drain(load, receiver, 120_000);
    const drainedAfter = (Date.now() - stoppedAt) / 1000;
    // The restarted router's look-ups time out and it says what it is waiting for.
    const waited = readFileSync(supervisor.service('router').logFile, 'utf8').includes('registering schemas failed; trying again');
    const deliveredInFreeze = atKill.delivered - atFreeze.delivered;
    // The kill's own exit, and nothing else.
    const exits = supervisor.exitsSince(frozenAt).filter((exit) => !(exit.name === 'router' && exit.at >= killedAt && exit.at < killedAt + 5_000));
    say(
      `registry frozen ${FREEZE_SECONDS} s under ${RATE}/s, the router killed ${FREEZE_KILL_AFTER_SECONDS} s in: ` +
        `${acceptedDuring} accepted during the freeze, ${deliveredInFreeze} delivered in it before the kill; ` +
        `${result.accepted} accepted in all, ${result.lost} lost, ${result.duplicated} duplicated, all delivered ${drainedAfter.toFixed(1)} s after the load stopped (5 s after the thaw); ` +
        `${exits.length} service exits besides the kill; the restarted router logged its wait: ${waited}`,
    );
    expect(exits, 'no service exited but the one killed').toEqual([]);
    expect(acceptedDuring, 'ingest accepted while the registry was frozen').toBeGreaterThan(RATE * FREEZE_SECONDS * 0.5);
    expect(deliveredInFreeze, 'delivery went on in the freeze until the kill').toBeGreaterThan(RATE * FREEZE_KILL_AFTER_SECONDS * 0.5);
    expect(result.lost, `lost, e.g. ${result.lostSample.join(', ')}`).toBe(0);
    expect(waited, 'the restarted router logged that it waits for the registry').toBe(true);
  });

  it('poison records on the ingest, deliveries, retry-lane and tier topics are quarantined and valid messages keep flowing', { timeout: 120_000 }, async () => {
    const kafka = createKafka({ brokers: stack.brokers, clientId: 'fault-poison', logger });
    const codec = new AvroCodec({ registryUrl: stack.registryUrl, logger });
    await codec.register(topics.deliveries, 'delivery');
    const producer = createProducer(kafka);
    await producer.connect();
    const good = codec.encode(topics.deliveries, testDelivery('hooks', 'poison-template'));
    const unknownSchema = Buffer.from(good);
    unknownSchema.writeUInt32BE(1_999_999_999, 1);
    const deep = Buffer.from(`${'{"n":'.repeat(5_000)}1${'}'.repeat(5_000)}`);
    const tier = topics.retry(ladderTiers(ladder)[0]!.label);
    const poisoned = [topics.ingest, topics.deliveries, topics.dueRetries, tier];
    const started = Date.now();
    for (const topic of poisoned) {
      await producer.send({ topic, messages: [{ key: 'poison', value: Buffer.from('not avro') }, { key: 'poison', value: unknownSchema }, { key: 'poison', value: good.subarray(0, 12) }] });
    }
    // And an ingest record whose properties nest 5,000 deep, as a direct producer could write.
    await codec.register(topics.ingest, 'ingest');
    const now = Date.now();
    await producer.send({
      topic: topics.ingest,
      messages: [{ key: 'deep', value: codec.encode(topics.ingest, { messageId: 'deep-1', type: 'track', sourceId: 'app', userId: 'u', anonymousId: null, timestamp: now, originalTimestamp: null, sentAt: null, receivedAt: now, event: 'e', name: null, category: null, groupId: null, previousId: null, properties: deep.toString(), traits: null, context: null, integrations: null }) }],
    });
    await producer.disconnect();

    const load = new Load(ingestUrl, WRITE_KEY, 'after-poison');
    load.start(30, 10);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await load.stop();
    const result = await drain(load, receiver, 60_000);
    const flowingAfter = (Date.now() - started) / 1000;
    // Each service quarantines on its own schedule (the dispatcher with its outcome batch):
    // wait for all thirteen, then say how long the last one took.
    const expected = [4, 3, 3, 3];
    let quarantined: Awaited<ReturnType<typeof readTopicToEnd>> = [];
    let fromTopics: number[] = [];
    const deadline = Date.now() + 60_000;
    for (;;) {
      quarantined = await readTopicToEnd(kafka, topics.quarantine);
      const keys = new Set(quarantined.map(({ message }) => message.key?.toString() ?? ''));
      fromTopics = poisoned.map((topic) => [...keys].filter((key) => key.startsWith(`${topic}/`)).length);
      if (fromTopics.every((count, index) => count >= expected[index]!) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const allQuarantined = (Date.now() - started) / 1000;
    say(`poison on ${poisoned.length} topics: ${quarantined.length} records quarantined within ${allQuarantined.toFixed(1)} s (${poisoned.map((topic, index) => `${topic.slice(namespace.length + 1)} ${fromTopics[index]}`).join(', ')}); ${result.accepted} valid messages accepted after them, ${result.lost} lost, all delivered ${flowingAfter.toFixed(1)} s after the poison was written`);
    expect(result.lost).toBe(0);
    expect(fromTopics).toEqual(expected);
  });

  it('refuses amplifying requests and long ids with 400, memory flat, and cuts off a slow-trickle client', { timeout: 60_000 }, async () => {
    const authorization = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`;
    const send = async (body: unknown): Promise<{ status: number; code: string; ms: number }> => {
      const started = performance.now();
      const response = await fetch(`${ingestUrl()}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization },
        body: gzipSync(JSON.stringify(body)),
      });
      const answer = (await response.json()) as { code: string };
      return { status: response.status, code: answer.code, ms: performance.now() - started };
    };
    const rss = () => metricValue(ingestUrl(), 'process_resident_memory_bytes');
    const rssBefore = await rss();
    const tiny = (count: number) => Array.from({ length: count }, () => ({ type: 'track', userId: 'u', event: 'e' }));
    const refusals: Array<{ status: number; code: string; ms: number }> = [];
    for (let round = 0; round < 10; round += 1) {
      // The report's request: a 100 KB batch context shared by 9,700 tiny messages.
      refusals.push(await send({ batch: tiny(9_700), context: { blob: 'x'.repeat(100_000) } }));
      // Under the per-message limit, but 400 × 20 KB written: past the 2 MB expansion bound.
      refusals.push(await send({ batch: tiny(400), context: { blob: 'x'.repeat(20_000) } }));
      refusals.push(await send({ batch: [{ type: 'track', userId: 'u', event: 'e', messageId: 'm'.repeat(30_000) }] }));
    }
    const rssAfter = await rss();
    const slowest = Math.max(...refusals.map((refusal) => refusal.ms));
    say(
      `amplifying and long-id requests, 10 rounds: ${[...new Set(refusals.map((refusal) => `${refusal.status} ${refusal.code}`))].join(', ')}; ` +
        `slowest answer ${slowest.toFixed(0)} ms; ingest RSS ${(rssBefore / 2 ** 20).toFixed(0)} MB before, ${(rssAfter / 2 ** 20).toFixed(0)} MB after`,
    );
    expect(refusals.slice(0, 3).map((refusal) => `${refusal.status} ${refusal.code}`)).toEqual([
      '400 message_too_large',
      '400 request_too_large',
      '400 validation_failed',
    ]);
    for (const refusal of refusals) expect(refusal.status).toBe(400);
    // The slowest answer is reported above; how fast a refusal is belongs to the benchmarks.
    expect(rssAfter - rssBefore, 'ingest memory stays flat').toBeLessThan(100 * 2 ** 20);

    const ingest = supervisor.service('ingest');
    const socket = connect(ingest.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
    const trickleStart = Date.now();
    const trickle = setInterval(() => socket.write(' '), 500);
    const closedAfter = await new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - trickleStart)));
    clearInterval(trickle);
    say(`slow-trickle client cut off after ${(closedAfter / 1000).toFixed(1)} s (INGEST_REQUEST_TIMEOUT 5 s)`);
    expect(closedAfter).toBeLessThan(15_000);
    expect(account(new Load(ingestUrl, WRITE_KEY, 'none'), receiver).lost).toBe(0);
  });
});

export type { Delivery };
