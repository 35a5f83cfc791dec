/**
 * ingest — the Segment-compatible HTTP API (and, mounted beside it, the admin API) on
 * INGEST_PORT, with /healthz, /readyz and /metrics. Accepted calls are written to the
 * ingest topic in Kafka transactions (a request of one event, alone, by an idempotent
 * produce); the service is ready once it has read the config topic and both producers are
 * connected.
 */
import {
  AtomicOutput,
  ConfigView,
  createInfrastructure,
  createHttpServer,
  enabledDestinations,
  listen,
  prepareInfrastructure,
  ProduceBatcher,
  runService,
  SourceLanes,
  topicDefinitions,
} from '@tributary/shared';
import { adminEnv, mountAdmin } from './admin/index.js';
import { registerConsole } from './console.js';
import { FairTurns } from './fair-turns.js';
import { createIngestMetrics, transactionObserver } from './ingest-metrics.js';
import { registerSegmentApi } from './segment-api.js';
import { installServerRefusals } from './server-refusals.js';
import { ingestEnv } from './settings.js';

await runService({
  name: 'ingest',
  env: { ...ingestEnv, ...adminEnv },
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    readiness.set('config', false);
    readiness.set('producer', false);
    readiness.set('single-record producer', false);
    const infrastructure = createInfrastructure(context);
    const { kafka, codec, topics } = infrastructure;
    const config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix: `${env.TOPIC_NAMESPACE}-ingest` });
    // Sources take turns at the main thread's parsing and encoding, 4 ms of it per loop turn
    // before new requests are let in (a request of 476 KB takes about 14 ms alone).
    const turns = new FairTurns({ budgetMs: 4 });
    const ingestMetrics = createIngestMetrics(metrics.registry, () => turns.waiting);
    // A request of one event, alone in its group, needs no transaction (atomic-output.ts).
    const output = new AtomicOutput({
      kafka,
      transactionalId: `${env.TOPIC_NAMESPACE}-ingest-${env.INSTANCE_ID}`,
      defaultTopic: topics.ingest,
      logger,
      onUsable: (producer, usable) => readiness.set(producer === 'transactional' ? 'producer' : 'single-record producer', usable),
    });
    const batcher = new ProduceBatcher({
      send: (records) => output.write(records),
      maxRecords: env.INGEST_MAX_TRANSACTION_RECORDS,
      maxBytes: env.INGEST_MAX_TRANSACTION_BYTES,
      maxPendingBytes: env.INGEST_MAX_BYTES_IN_FLIGHT,
      timeoutMs: env.INGEST_PRODUCE_TIMEOUT,
      onTransaction: transactionObserver(ingestMetrics, logger),
      // Unready while a transaction has gone unacknowledged for INGEST_PRODUCE_TIMEOUT (the
      // broker away, as a rule): requests get 503 at once instead of each waiting out the
      // deadline, and load balancers see it within that time, whatever kafkajs's retries do.
      onStalled: (stalled) => {
        readiness.set('kafka acknowledging', !stalled);
        if (stalled) logger.warn({ timeoutMs: env.INGEST_PRODUCE_TIMEOUT }, 'a Kafka transaction is unacknowledged past the produce timeout; not ready until it ends');
      },
    });
    readiness.set('kafka acknowledging', true);

    const lanes = new SourceLanes(env.INGEST_SOURCE_RATE);
    const timeouts = { requestMs: env.INGEST_REQUEST_TIMEOUT, headersMs: env.INGEST_HEADERS_TIMEOUT, keepAliveMs: env.INGEST_KEEP_ALIVE_TIMEOUT };
    const app = createHttpServer({ logger, metrics, readiness, timeouts });
    // Node's and Fastify's own refusals (slow or broken requests, shutdown, unknown paths) in the API's error format.
    const server = installServerRefusals(app, { logger, timeouts: { requestMs: timeouts.requestMs, headersMs: Math.min(timeouts.headersMs, timeouts.requestMs) } });
    registerSegmentApi(app, {
      sourceByWriteKey: (writeKey) => config.sourceByWriteKey(writeKey),
      encode: (message, lane) => {
        const topic = lane === 'overflow' ? topics.ingestOverflow : topics.ingest;
        return { topic, value: codec.encode(topic, message) };
      },
      laneFor: (sourceId, units, now) => lanes.laneFor(sourceId, units, now),
      giveBack: (sourceId, units) => lanes.giveBack(sourceId, units),
      destinationCount: (sourceId) => enabledDestinations(config.destinationsForSource(sourceId)),
      submit: (records, sourceId) => batcher.submit(records, sourceId),
      inTurn: (sourceKey, work) => turns.run(sourceKey, work),
      isReady: () => readiness.isReady(),
      isOverloaded: (sourceId) => batcher.isFull(sourceId),
      trustedProxies: env.INGEST_TRUST_PROXY,
      logger,
      metrics: ingestMetrics,
    });
    // Admin API (/admin/v1) and the TRIBUTARY_CONFIG start-up apply: services/ingest/src/admin/.
    const admin = mountAdmin(context, { app, kafka, codec, topics, config });
    // The web console (clients/console) at /console/: static files only; its calls go to the admin API.
    registerConsole(app, { logger });
    await listen(app, env.INGEST_PORT, env.HTTP_HOST);

    // Shutdown runs these last-registered first: stop reading config, stop taking
    // requests and finish those in flight, let their transactions end, then disconnect.
    onShutdown('producer', () => output.stop());
    onShutdown('transactions', () => batcher.close());
    onShutdown('http', () => server.close());
    onShutdown('config', () => config.stop());
    // Listening already: while Kafka or the registry is away at start-up, requests get 503
    // (not ready) and ingest waits for them rather than exiting.
    await prepareInfrastructure(context, infrastructure, (names) => topicDefinitions(names));
    await Promise.all([config.start(), output.start(context.signal)]);
    await admin.start();
    readiness.set('config', true);
  },
});
