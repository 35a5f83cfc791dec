/**
 * The dispatcher's loop with everything around it faked: no Kafka (the lane readers, the
 * outcome writer and the health publisher are never started), a webhook client the test
 * answers by hand, and a config of plain objects. What the loop settled is read back from
 * its partition ledger, as the outcome writer would.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, DEFAULT_LADDER, type AvroCodec, type ConfigFreshness, type ConfigView, type Readiness, type TransactionalOutput } from '@tributary/shared';
import { topicNames, type Destination } from '@tributary/schemas';
import { testDelivery } from '@tributary/test/harness';
import type { UrlResult } from './classify.js';
import { Dispatcher, type DispatcherOptions } from './dispatcher.js';
import type { Output, PartitionLedger } from './ledger.js';
import { createDispatcherMetrics } from './metrics.js';
import type { WebhookClient } from './webhook-client.js';

const topics = topicNames('t');
/** Stands in for the Avro codec: JSON, so the records can be read back. */
const json = { encode: (_topic: string, value: unknown) => Buffer.from(JSON.stringify(value, (_key, v: unknown) => (Buffer.isBuffer(v) ? v.toString() : v))) };

function destination(id: string, urls: string[]): Destination {
  return { id, name: id, type: 'webhooks', sources: ['web'], enabled: true, settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: urls.map((url) => ({ url, headers: {} })) } };
}

interface Call {
  destinationId: string;
  url: string;
  answer(result: UrlResult): void;
}

/**
 * Answers a request at once, or leaves it to the test (undefined). `nth`: the request's number
 * among its destination's, from 1.
 */
type Respond = (destinationId: string, url: string, nth: number) => UrlResult | undefined;

/** A webhook client whose requests the test answers. */
class FakeClient {
  readonly calls: Call[] = [];
  constructor(private readonly respond: Respond) {}

  post(destinationId: string, url: string): Promise<UrlResult> {
    return new Promise((resolve) => {
      this.calls.push({ destinationId, url, answer: resolve });
      const result = this.respond(destinationId, url, this.to(destinationId).length);
      if (result) resolve(result);
    });
  }

  to(destinationId: string): Call[] {
    return this.calls.filter((call) => call.destinationId === destinationId);
  }
}

const ok: UrlResult = { kind: 'response', status: 200 };
const status = (code: number): UrlResult => ({ kind: 'response', status: code });

function harness(options: { destinations: Destination[]; respond: Respond; overrides?: Partial<DispatcherOptions> }) {
  const configured = new Map(options.destinations.map((entry) => [entry.id, entry]));
  const config = { destination: (id: string) => configured.get(id), state: () => ({ sources: [], destinations: [...configured.values()] }) } as unknown as ConfigView;
  const client = new FakeClient(options.respond);
  const logger = createLogger({ service: 'test', level: 'silent' });
  const dispatcher = new Dispatcher({
    kafka: {} as Kafka,
    codec: json as unknown as AvroCodec,
    topics,
    config,
    freshness: { caughtUpSince: () => Promise.resolve() } as unknown as ConfigFreshness,
    client: client as unknown as WebhookClient,
    output: {} as TransactionalOutput,
    logger,
    metrics: createDispatcherMetrics({ registry: new Registry() } as Parameters<typeof createDispatcherMetrics>[0], []),
    readiness: { set: () => undefined } as unknown as Readiness,
    ladder: DEFAULT_LADDER,
    breaker: { consecutiveFailures: 1, failureRatio: 0.5, minRequests: 1_000, windowMs: 10_000, openMs: 1, maxOpenMs: 1_000, probes: 1, probeTimeoutMs: 60_000 },
    limits: { maxInFlight: 2, maxInFlightPerDestination: 64, maxQueueWaitMs: 1, maxDestinationShare: 0.5, maxBuffered: 3, maxBufferedBytes: 1e9, maxStagedBytes: 1e9, maxRecordBytes: 1e6 },
    commitIntervalMs: 250,
    sessionTimeoutMs: 30_000,
    disableOnGone: false,
    instanceId: 'dispatcher-0',
    groupId: 'g',
    onFatal: (error) => {
      throw error;
    },
    ...options.overrides,
  });
  const ledger = dispatcher.ledger('first', 0, 0n);
  let offset = 0n;
  const accept = (destinationId: string) => {
    const delivery = testDelivery(destinationId, `m-${offset}`);
    dispatcher.accept('first', ledger, offset, { key: Buffer.from(delivery.deliveryId), value: Buffer.from('record') } as unknown as KafkaMessage, delivery);
    offset++;
  };
  return { dispatcher, client, ledger, accept, configured, logger };
}

/** Lets the attempts started settle (their answers are promise callbacks; deferrals go in turns of setImmediate). */
async function settled(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The records settled so far, as the outcome writer would take them. */
function outputs(ledger: PartitionLedger): Output[] {
  const batch = ledger.take(Number.MAX_SAFE_INTEGER);
  if (!batch) return [];
  ledger.confirm();
  return batch.outputs;
}

describe('Dispatcher', () => {
  it('does not shed the probe of a half-open circuit with a full lane: it runs and closes the circuit', async () => {
    const { dispatcher, client, accept } = harness({
      destinations: [destination('x', ['http://x.example/']), destination('h', ['http://h.example/'])],
      // x's first request hangs, its second answers 503 (the circuit opens), later ones 200; h's hang.
      respond: (destinationId, _url, nth) => (destinationId !== 'x' || nth === 1 ? undefined : nth === 2 ? status(503) : ok),
    });
    accept('x');
    accept('x');
    await settled();
    accept('h'); // both global slots are taken now: x's straggler and h
    await sleep(5); // x's cool-down (1 ms) ends; both running attempts are stalled
    accept('x'); // half-open: x's one probe, queued for want of a slot
    expect(client.to('x')).toHaveLength(2);
    // Three deliveries read and unsettled fill the lane: the backlog rule judges what is queued.
    expect(dispatcher.hasRoom('first')).toBe(false);
    await settled();
    for (const call of client.calls) call.answer(ok);
    await settled();
    // The probe was attempted once a slot freed, and its success closed the circuit.
    expect(client.to('x')).toHaveLength(3);
    accept('x');
    await settled();
    expect(client.to('x')).toHaveLength(4);
  });

  it('disables a destination only when every URL answered 410 Gone', async () => {
    const gone = destination('gone', ['http://a.example/hook', 'http://b.example/hook']);
    const partly = destination('partly', ['http://a.example/hook', 'http://b.example/hook']);
    const { ledger, accept } = harness({
      destinations: [gone, partly],
      respond: (destinationId, url) => (destinationId === 'partly' && url.startsWith('http://b') ? status(404) : status(410)),
      overrides: { disableOnGone: true },
    });
    accept('partly');
    accept('gone');
    await settled();
    const written = outputs(ledger);
    const disabling = written.filter((output) => output.topic === topics.config);
    expect(disabling.map((output) => output.key)).toEqual(['destination/gone']);
    expect(JSON.parse(disabling[0]!.value!.toString())).toMatchObject({ entity: { ...gone, enabled: false } });
    const letters = written.filter((output) => output.topic === topics.deadLetters).map((output) => JSON.parse(output.value!.toString()) as { reason: string });
    expect(letters.map((letter) => letter.reason)).toEqual(['http_status', 'gone']);
  });

  it('does not disable a destination that was edited while the attempt that found it gone ran', async () => {
    const { ledger, accept, configured, client, logger } = harness({ destinations: [destination('crm', ['http://old.example/hook'])], respond: () => undefined, overrides: { disableOnGone: true } });
    const warn = vi.spyOn(logger, 'warn');
    accept('crm');
    await settled();
    // An admin replaces the URL while the old one is answering 410.
    configured.set('crm', destination('crm', ['http://new.example/hook']));
    client.calls[0]!.answer(status(410));
    await settled();
    const written = outputs(ledger);
    expect(written.filter((output) => output.topic === topics.config)).toEqual([]);
    expect(written.some((output) => output.topic === topics.deadLetters)).toBe(true);
    expect(warn).toHaveBeenCalledWith({ destinationId: 'crm' }, expect.stringContaining('changed'));
  });
});
