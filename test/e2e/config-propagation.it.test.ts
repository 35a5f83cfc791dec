/**
 * Issue 4, "must show": a destination added, changed and disabled through the admin API
 * takes effect in the running router within one second, without a restart. The ingest
 * (with the admin API) and the router run as real processes; messages go in through the
 * Segment API as a client would send them, and the deliveries topic shows what the router
 * decided for each.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicNames, type Delivery } from '@tributary/schemas';
import {
  adminClient,
  eventually,
  metricValue,
  stackEnv,
  startService,
  tailTopic,
  testCodec,
  testKafka,
  uniqueNamespace,
  type RunningService,
  type TopicTail,
} from '@tributary/test/harness';

const ADMIN_TOKEN = 'e2e-admin-token';
const PROPAGATION_LIMIT_MS = 1000;
/** Probes sent past the limit in each phase, however slowly they go out (about 15 a second, normally). */
const MIN_SETTLED_PROBES = 6;

describe('config changes through the admin API reach the running router', () => {
  const namespace = uniqueNamespace('cfg');
  const topics = topicNames(namespace);
  let ingest: RunningService;
  let router: RunningService;
  let deliveries: TopicTail<Delivery>;

  const admin = adminClient(() => ingest.url, ADMIN_TOKEN);

  const track = async (writeKey: string, userId: string): Promise<{ messageId: string; sentAt: number }> => {
    const messageId = randomUUID();
    const sentAt = Date.now();
    const response = await fetch(`${ingest.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId, event: 'Config Probe', messageId }),
    });
    expect(response.status).toBe(200);
    return { messageId, sentAt };
  };

  const destination = (sources: string[], enabled: boolean) => ({
    type: 'webhooks',
    sources,
    enabled,
    settings: { webhooks: [{ url: 'https://hooks.example.com/probe' }] },
  });

  /**
   * Sends a message every 50 ms from the moment a change was acknowledged until the
   * deliveries show the change, then for one more second, and on until at least
   * MIN_SETTLED_PROBES were sent past the limit; returns each probe with whether the router
   * routed it to `destinationId`.
   */
  const probe = async (
    writeKey: string,
    destinationId: string,
    changedAt: number,
  ): Promise<Array<{ messageId: string; sentAt: number; routed: () => boolean }>> => {
    const probes: Array<{ messageId: string; sentAt: number; routed: () => boolean }> = [];
    const settled = () => probes.filter((p) => p.sentAt >= changedAt + PROPAGATION_LIMIT_MS).length;
    while (Date.now() - changedAt < PROPAGATION_LIMIT_MS + 1000 || settled() < MIN_SETTLED_PROBES) {
      const sent = await track(writeKey, `user-${probes.length}`);
      probes.push({
        ...sent,
        routed: () => deliveries.records.some((d) => d.messageId === sent.messageId && d.destinationId === destinationId),
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return probes;
  };

  beforeAll(async () => {
    const env = { ...stackEnv(namespace), ADMIN_TOKEN };
    ingest = await startService('ingest', { env });
    router = await startService('router', { env });
    deliveries = await tailTopic(testKafka(), topics.deliveries, (value) => testCodec().decode<Delivery>('delivery', value));
  });

  afterAll(async () => {
    await deliveries?.stop();
    await router?.stop();
    await ingest?.stop();
  });

  it('adds, changes and disables a destination without a restart, each within one second', async () => {
    await admin('PUT', '/sources/web', { name: 'Web', writeKey: `wk_web_${namespace}` });
    await admin('PUT', '/sources/app', { name: 'App', writeKey: `wk_app_${namespace}` });

    // Nothing is routed before the destination exists. Routing applies the config the router
    // holds when it routes a message, so the destination is added only once the router has
    // filtered this one — else it may still be in flight and, rightly, routed to it.
    const before = await track(`wk_web_${namespace}`, 'nobody');
    await eventually(async () => (await metricValue(router.url, 'tributary_router_filtered_total', { reason: 'no_destinations' })) >= 1, 'the router filtered the message sent before the destination existed');

    // Added: connected to `web`.
    const added = Date.now();
    await admin('PUT', '/destinations/hooks', destination(['web'], true));
    const afterAdd = await probe(`wk_web_${namespace}`, 'hooks', added);

    // Changed: now connected to `app` as well.
    const changed = Date.now();
    await admin('PUT', '/destinations/hooks', destination(['web', 'app'], true));
    const afterChange = await probe(`wk_app_${namespace}`, 'hooks', changed);

    // Disabled.
    const disabled = Date.now();
    await admin('PUT', '/destinations/hooks', destination(['web', 'app'], false));
    const afterDisable = await probe(`wk_web_${namespace}`, 'hooks', disabled);

    // Let the router catch up with every probe before judging: the last routed probes of
    // the first two phases show it is current; the disabled phase's probes produce nothing
    // to wait on, so they get one more second.
    await deliveries.waitFor(() => afterAdd.at(-1)!.routed() && afterChange.at(-1)!.routed(), 15_000, 'last probes routed');
    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(deliveries.records.some((d) => d.messageId === before.messageId)).toBe(false);
    for (const [phase, probes, changedAt, wantRouted] of [
      ['added', afterAdd, added, true],
      ['changed', afterChange, changed, true],
      ['disabled', afterDisable, disabled, false],
    ] as const) {
      const settled = probes.filter((p) => p.sentAt >= changedAt + PROPAGATION_LIMIT_MS);
      expect(settled.length, `${phase}: probes sent a second after the change`).toBeGreaterThanOrEqual(MIN_SETTLED_PROBES);
      const wrong = settled.filter((p) => p.routed() !== wantRouted);
      expect(wrong, `${phase}: probes sent ≥1 s after the change that were ${wantRouted ? 'not routed' : 'still routed'}`).toEqual([]);
      // How fast it really was: the first probe that shows the new state.
      const first = probes.find((p) => p.routed() === wantRouted);
      expect(first, `${phase}: some probe shows the change`).toBeDefined();
      process.stderr.write(`[config-propagation] ${phase}: first probe in the new state sent ${first!.sentAt - changedAt} ms after the admin call started\n`);
    }
  });
});
