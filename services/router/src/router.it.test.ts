/**
 * The router as deployed — a child process on the real broker and registry — fed by
 * records written straight to its namespace's ingest and config topics.
 */
import { readFileSync } from 'node:fs';
import { CompressionTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_TYPES, type Destination, type IngestMessage, type QuarantinedRecord, type Source } from '@tributary/schemas';
import { configKey } from '@tributary/shared';
import { eventually, metricValue, readTopic, readTopicToEnd, stackEnv, startService, testKafka, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { FIXTURES } from './__fixtures__/messages.js';
import {
  DeliveryWatcher,
  destination,
  openStack,
  produceIngest,
  source,
  trackMessage,
  writeConfig,
  type Stack,
} from './__fixtures__/stack.js';

const namespace = uniqueNamespace('router');
const routerEnv = { ...stackEnv(namespace), INSTANCE_ID: 'it-router' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stack: Stack;
let watcher: DeliveryWatcher;
let router: RunningService;

beforeAll(async () => {
  stack = await openStack(namespace);
  await writeConfig(stack, source('web'));
  await writeConfig(stack, source('app'));
  await writeConfig(stack, source('paused', { enabled: false }));
  await writeConfig(stack, destination('crm', ['web']));
  await writeConfig(stack, destination('bi', ['web', 'paused']));
  // Always on for `app`: a message reaching it proves the ones before it (same key, same partition) were routed.
  await writeConfig(stack, destination('probe', ['app']));
  router = await startService('router', { env: routerEnv });
  watcher = new DeliveryWatcher(stack);
  await watcher.start();
});

afterAll(async () => {
  await router?.stop();
  await watcher?.stop();
  await stack?.close();
});

describe('routing', () => {
  it('sends every message type to each enabled destination, keyed <destination>/<source>/<messageId>, with the golden body', async () => {
    await produceIngest(stack, MESSAGE_TYPES.map((type) => FIXTURES[type]));
    const expected = MESSAGE_TYPES.flatMap((type) => ['crm', 'bi'].map((id) => `${id}/web/${FIXTURES[type].messageId}`));
    await watcher.waitForKeys(expected);
    for (const type of MESSAGE_TYPES) {
      const golden = readFileSync(new URL(`./__golden__/${type}.json`, import.meta.url));
      for (const destinationId of ['crm', 'bi']) {
        const seen = watcher.seen.filter(({ key }) => key === `${destinationId}/web/${FIXTURES[type].messageId}`);
        expect(seen).toHaveLength(1);
        const { delivery } = seen[0]!;
        expect(delivery.body.equals(golden)).toBe(true);
        expect(delivery).toMatchObject({
          deliveryId: `${destinationId}/web/${FIXTURES[type].messageId}`,
          destinationId,
          sourceId: 'web',
          messageId: FIXTURES[type].messageId,
          messageType: type,
          userId: FIXTURES[type].userId,
          anonymousId: FIXTURES[type].anonymousId,
          receivedAt: FIXTURES[type].receivedAt,
          attempts: 0,
          firstAttemptAt: null,
          lastError: null,
          lastStatus: null,
          replays: 0,
        });
        expect(delivery.routedAt).toBeGreaterThanOrEqual(FIXTURES[type].receivedAt);
      }
    }
    expect(await metricValue(router.url, 'tributary_router_routed_total', { destination: 'crm' })).toBeGreaterThanOrEqual(MESSAGE_TYPES.length);
    // The offsets commit with the deliveries, so once these are visible the lag is 0 on every partition.
    const group = `${namespace}-router`;
    await eventually(async () => (await metricValue(router.url, 'tributary_consumer_lag', { group, topic: stack.topics.ingest })) === 0, 'no lag');
    const exposition = await (await fetch(`${router.url}/metrics`)).text();
    for (const partition of ['0', '1']) expect(exposition).toContain(`tributary_consumer_lag{group="${group}",topic="${stack.topics.ingest}",partition="${partition}",service="router"} 0`);
  });

  it('sends nothing when the integrations object turns Webhooks off, top-level or in context', async () => {
    const before = await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'integrations_off' });
    const off = [
      trackMessage('int-off-top', { sourceId: 'app', integrations: '{"All":true,"Webhooks":false}' }),
      trackMessage('int-off-context', { sourceId: 'app', context: '{"integrations":{"All":false}}' }),
      trackMessage('int-on-wrong-case', { sourceId: 'app', integrations: '{"webhooks":false,"all":false}' }),
    ];
    await produceIngest(stack, off);
    await watcher.waitForKeys(['probe/app/int-on-wrong-case']);
    await watcher.settle();
    expect(watcher.has('probe/app/int-off-top')).toBe(false);
    expect(watcher.has('probe/app/int-off-context')).toBe(false);
    expect(await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'integrations_off' })).toBe(before + 2);
  });

  it('filters a disabled source and an unknown one', async () => {
    const disabled = await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'source_disabled' });
    const none = await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'no_destinations' });
    await produceIngest(stack, [trackMessage('from-paused', { sourceId: 'paused' }), trackMessage('from-nowhere', { sourceId: 'nowhere' }), trackMessage('after-filtered', { sourceId: 'app' })]);
    await watcher.waitForKeys(['probe/app/after-filtered']);
    await watcher.settle();
    expect(watcher.keys().filter((key) => key.endsWith('/from-paused') || key.endsWith('/from-nowhere'))).toEqual([]);
    expect(await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'source_disabled' })).toBe(disabled + 1);
    expect(await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'no_destinations' })).toBe(none + 1);
  });

  it('quarantines, logs and counts records it cannot route, and goes on', async () => {
    const notFramed = await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'not_framed' });
    const unknown = await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'unknown_schema' });
    const missing = await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'missing_field' });
    const deep = `${'{"n":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const unknownSchema = Buffer.concat([Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0]), Buffer.from('whatever')]);
    await stack.producer.send({
      topic: stack.topics.ingest,
      messages: [
        { key: 'anon-1', value: Buffer.from('{"not":"avro"}') },
        { key: 'anon-1', value: unknownSchema },
        { key: 'anon-1', value: stack.codec.encode(stack.topics.ingest, trackMessage('no-event', { sourceId: 'app', event: null })) },
        { key: 'anon-1', value: stack.codec.encode(stack.topics.ingest, trackMessage('too-deep', { sourceId: 'app', properties: deep })) },
        { key: 'anon-1', value: stack.codec.encode(stack.topics.ingest, trackMessage('m'.repeat(30_000), { sourceId: 'app' })) },
        { key: 'anon-1', value: stack.codec.encode(stack.topics.ingest, trackMessage('after-junk', { sourceId: 'app' })) },
      ],
    });
    await watcher.waitForKeys(['probe/app/after-junk']);
    expect(watcher.has('probe/app/no-event')).toBe(false);
    expect(watcher.has('probe/app/too-deep')).toBe(false);
    expect(await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'not_framed' })).toBe(notFramed + 1);
    expect(await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'unknown_schema' })).toBe(unknown + 1);
    expect(await metricValue(router.url, 'tributary_router_invalid_total', { reason: 'missing_field' })).toBe(missing + 1);
    await expect.poll(() => readFileSync(router.logFile, 'utf8')).toMatch(/"level":"error".*"offset":"\d+","reason":"missing_field".*invalid ingest record quarantined/);
    // Each is on the quarantine topic with its reason and original bytes, written with the offset that skipped it.
    const quarantined = await readTopic(testKafka(), stack.topics.quarantine, { until: (records) => records.length >= 5 });
    const reasons = await Promise.all(quarantined.map(async ({ message }) => (await stack.codec.decode<QuarantinedRecord>('quarantine', message.value!)).reason));
    expect(reasons.sort()).toEqual(['invalid_id', 'missing_field', 'not_framed', 'too_deep', 'unknown_schema']);
    expect(readFileSync(router.logFile, 'utf8')).not.toContain('not-logged');
  });
});

describe('configuration changes reach the running router', () => {
  // Same key → same ingest partition → routed in order, so once a later message's
  // delivery is visible, an earlier message's would be too.
  const onKey = (messageId: string, sourceId: string): IngestMessage => trackMessage(messageId, { sourceId, anonymousId: 'cfg-anon' });
  /** The destination every message of the source goes to, whatever the change: `probe` for `app`, `crm` for `web`. */
  const always = { app: 'probe', web: 'crm' } as const;

  /**
   * Evidence, rather than a pause, that the router routes with a config change: marker messages
   * from `sourceId` (on the test's key, so routed in order with what follows) until one is routed
   * as `applied` says the change makes it. Once the marker's transaction is read (its delivery
   * to `always`, then everything committed), its other deliveries are known.
   */
  const untilApplied = async (sourceId: keyof typeof always, label: string, applied: (marker: string) => boolean): Promise<void> => {
    const deadline = Date.now() + 20_000;
    for (let n = 0; ; n++) {
      const marker = `${label}-marker-${n}`;
      await produceIngest(stack, [onKey(marker, sourceId)]);
      await watcher.waitForKeys([`${always[sourceId]}/${sourceId}/${marker}`]);
      await watcher.settle();
      if (applied(marker)) return;
      if (Date.now() > deadline) throw new Error(`the router did not route by the change (${label}) within 20 s`);
      await sleep(100);
    }
  };

  // The product's one-second bound for a change made through the admin API is test/e2e/config-propagation's.
  it('a destination added, changed and disabled takes effect in the running router, without a restart', async () => {
    const pid = router.process.pid;

    await writeConfig(stack, destination('hooks', ['app']));
    await untilApplied('app', 'cfg-added', (marker) => watcher.has(`hooks/app/${marker}`));
    await produceIngest(stack, [onKey('cfg-added', 'app')]);
    await watcher.waitForKeys(['probe/app/cfg-added', 'hooks/app/cfg-added']);

    await writeConfig(stack, destination('hooks', ['web']));
    await untilApplied('web', 'cfg-changed', (marker) => watcher.has(`hooks/web/${marker}`));
    await produceIngest(stack, [onKey('cfg-changed-app', 'app'), onKey('cfg-changed-web', 'web')]);
    await watcher.waitForKeys(['probe/app/cfg-changed-app', 'hooks/web/cfg-changed-web']);
    await watcher.settle();
    expect(watcher.has('hooks/app/cfg-changed-app')).toBe(false);

    const disabledBefore = await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'destination_disabled' });
    await writeConfig(stack, destination('hooks', ['web', 'app'], { enabled: false }));
    // Markers from `web`, which the change takes from `hooks`: the one that shows it is filtered as well.
    await untilApplied('web', 'cfg-disabled', (marker) => !watcher.has(`hooks/web/${marker}`));
    await produceIngest(stack, [onKey('cfg-disabled', 'app')]);
    await watcher.waitForKeys(['probe/app/cfg-disabled']);
    await watcher.settle();
    expect(watcher.has('hooks/app/cfg-disabled')).toBe(false);
    // The marker that showed the change, and this message.
    expect(await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'destination_disabled' })).toBe(disabledBefore + 2);

    expect(router.process.pid).toBe(pid);
    expect(router.process.exitCode).toBeNull();
  });
});

describe('deduplication', () => {
  it('forwards a messageId repeated by the same source once — within a batch, later, and after a restart', async () => {
    const repeat = trackMessage('dup-1', { sourceId: 'app' });
    await produceIngest(stack, [repeat, repeat, { ...repeat, properties: '{"n":2}' }]);
    await produceIngest(stack, [repeat, trackMessage('dup-sentinel-1', { sourceId: 'app' })]);
    await watcher.waitForKeys(['probe/app/dup-sentinel-1']);
    await watcher.settle();
    expect(watcher.keys().filter((key) => key === 'probe/app/dup-1')).toHaveLength(1);
    expect(await metricValue(router.url, 'tributary_router_duplicates_total')).toBe(3);

    await router.stop();
    router = await startService('router', { env: routerEnv });
    await produceIngest(stack, [repeat, trackMessage('dup-sentinel-2', { sourceId: 'app' })]);
    await watcher.waitForKeys(['probe/app/dup-sentinel-2']);
    await watcher.settle();
    expect(watcher.keys().filter((key) => key === 'probe/app/dup-1')).toHaveLength(1);
    expect(await metricValue(router.url, 'tributary_router_duplicates_total')).toBe(1);
  });

  it('the same messageId from another source is another message', async () => {
    await produceIngest(stack, [trackMessage('shared-id', { sourceId: 'web' }), trackMessage('shared-id', { sourceId: 'app' })]);
    await watcher.waitForKeys(['crm/web/shared-id', 'probe/app/shared-id']);
  });

  it('routes both partitions of a fetch in one transaction, and forwards a messageId repeated across them once', async () => {
    await router.stop();
    // Waiting on both partitions when the router starts, so its first fetch returns both.
    const onPartition = (partition: number, message: IngestMessage) => ({ partition, key: message.anonymousId, value: stack.codec.encode(stack.topics.ingest, message) });
    await stack.producer.send({
      topic: stack.topics.ingest,
      messages: [
        onPartition(0, trackMessage('cross-1', { sourceId: 'app', anonymousId: 'cross-a' })),
        onPartition(1, trackMessage('cross-1', { sourceId: 'app', anonymousId: 'cross-b' })),
        onPartition(0, trackMessage('cross-sentinel-0', { sourceId: 'app', anonymousId: 'cross-a' })),
        onPartition(1, trackMessage('cross-sentinel-1', { sourceId: 'app', anonymousId: 'cross-b' })),
      ],
    });
    router = await startService('router', { env: routerEnv });
    await watcher.waitForKeys(['probe/app/cross-sentinel-0', 'probe/app/cross-sentinel-1']);
    await watcher.settle();
    expect(watcher.keys().filter((key) => key === 'probe/app/cross-1')).toHaveLength(1);
    expect(await metricValue(router.url, 'tributary_router_duplicates_total')).toBe(1);
    expect(await metricValue(router.url, 'tributary_router_transaction_partitions_count')).toBe(1);
    expect(await metricValue(router.url, 'tributary_router_transaction_partitions_sum')).toBe(2);
    expect(await metricValue(router.url, 'tributary_router_transaction_size_sum')).toBe(4);
  });
});

describe('the main lane share', () => {
  it('never moves a record whose copy the broker would refuse: a large compressed record past the share is quarantined where it is, and the lane goes on', async () => {
    // A direct producer's GZIP batch: ~3 MB a record decompressed, a few KB on the wire, so
    // the broker takes it. Three of them to `web` (two destinations, ~1,500 units each) are
    // past ROUTER_SOURCE_RATE (2,000 units a second). Copied to the overflow lane uncompressed,
    // one was refused MESSAGE_TOO_LARGE, its transaction aborted and the partition was stuck:
    // the copy was tried again at every retry.
    const divertedBefore = await metricValue(router.url, 'tributary_router_diverted_total', { source: 'web' });
    const huge = JSON.stringify({ pad: 'x'.repeat(3_000_000) });
    const big = [0, 1, 2].map((index) => trackMessage(`big-${index}`, { sourceId: 'web', anonymousId: 'big-anon', properties: huge }));
    await stack.producer.send({
      topic: stack.topics.ingest,
      compression: CompressionTypes.GZIP,
      messages: big.map((message) => ({ key: message.anonymousId, value: stack.codec.encode(stack.topics.ingest, message) })),
    });
    await produceIngest(stack, [trackMessage('big-after', { sourceId: 'web', anonymousId: 'big-anon' })]);
    await watcher.waitForKeys(['crm/web/big-after'], 45_000);
    const quarantined = await readTopicToEnd(testKafka(), stack.topics.quarantine, { timeoutMs: 30_000 });
    const reasons = await Promise.all(quarantined.map(async ({ message }) => (await stack.codec.decode<QuarantinedRecord>('quarantine', message.value!)).reason));
    expect(reasons.filter((reason) => reason === 'too_large')).toHaveLength(3);
    expect(await metricValue(router.url, 'tributary_router_diverted_total', { source: 'web' })).toBe(divertedBefore);
    expect(watcher.keys().filter((key) => key.includes('/big-') && !key.endsWith('/big-after'))).toEqual([]);
  }, 90_000);
});

describe('a configuration change and a message right behind it', () => {
  it('routes a message sent right after its source and destination were created to that destination: the router waits for its config view', async () => {
    // What a client does through the admin API: create, and send at once, with no sleep. The
    // router follows the config topic on its own, and routing with the view it held, it
    // filtered such a message `no_destinations` whenever its config reader was a step behind
    // (lost, while the indexer, which waits, showed it routed and pending). The reader is put
    // a step behind the way a provisioning script puts it there: a burst of config writes —
    // reading and applying them keeps it busy while the message is read. Last in the file: the
    // bursts lengthen every later start's read of the config topic.
    const ROUNDS = 30;
    const BURST = 2_000;
    const entry = (entity: Source | Destination) => ({
      key: configKey('settings' in entity ? 'destination' : 'source', entity.id),
      value: stack.codec.encode(stack.topics.config, { entity, updatedAt: Date.now() }),
    });
    const filteredBefore = await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'no_destinations' });
    for (let round = 0; round < ROUNDS; round++) {
      const noise = entry(destination('busy-noise', ['nobody'], { name: `noise-${round}` }));
      await stack.producer.send({ topic: stack.topics.config, messages: Array.from({ length: BURST }, () => noise) });
      await stack.producer.send({ topic: stack.topics.config, messages: [entry(source(`fresh-src-${round}`)), entry(destination(`fresh-${round}`, [`fresh-src-${round}`]))] });
      await produceIngest(stack, [trackMessage(`fresh-${round}`, { sourceId: `fresh-src-${round}`, anonymousId: 'fresh-anon' })]);
    }
    // The same key: once this one is routed, every round's message before it has been too.
    await produceIngest(stack, [trackMessage('fresh-after', { sourceId: 'app', anonymousId: 'fresh-anon' })]);
    await watcher.waitForKeys(['probe/app/fresh-after'], 60_000);
    await watcher.settle();
    const missed = Array.from({ length: ROUNDS }, (_, round) => round).filter((round) => !watcher.has(`fresh-${round}/fresh-src-${round}/fresh-${round}`));
    expect(missed).toEqual([]);
    expect(await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'no_destinations' })).toBe(filteredBefore);
  }, 120_000);
});
