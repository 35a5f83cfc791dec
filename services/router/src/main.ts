/**
 * router — fans every ingest record out to the Webhooks destinations enabled for its
 * source, one delivery record per destination, exactly once (see README.md).
 *
 * Start-up order matters: the transactional producer registers its id before the dedup
 * topic is read, so a predecessor's open transaction is aborted and does not hold the
 * read back; the dedup state is complete before the first ingest record is routed.
 */
import {
  ConfigFreshness,
  ConfigView,
  ConsumerLagProbe,
  createConsumerLagGauge,
  DestinationHealthTable,
  ladderFromSettings,
  ladderTiers,
  createHttpServer,
  createInfrastructure,
  listen,
  prepareInfrastructure,
  runService,
  topicDefinitions,
  TransactionalOutput,
} from '@tributary/shared';
import { DedupStore } from './dedup-store.js';
import { createRouterMetrics } from './metrics.js';
import { RouterPipeline } from './pipeline.js';
import { routerEnv } from './settings.js';

/**
 * How long a transaction waits for the config view to be current before it is routed with the
 * view as it stands (the config reader down): the indexer's and the dispatcher's bound.
 */
const CONFIG_FRESHNESS_TIMEOUT_MS = 5_000;

await runService({
  name: 'router',
  env: routerEnv,
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    for (const check of ['config', 'dedup']) readiness.set(check, false);
    const namespace = env.TOPIC_NAMESPACE;
    // Served first: while Kafka is away at start-up the router waits, unready but alive.
    const app = createHttpServer({ logger, metrics, readiness });
    await listen(app, env.HTTP_PORT, env.HTTP_HOST);
    onShutdown('http', () => app.close());
    const infrastructure = createInfrastructure(context);
    const { kafka, codec, topics } = infrastructure;
    // The tier topics too: a delivery of a destination whose circuit is open everywhere is deferred here.
    const ladder = ladderFromSettings(env);
    const retryTiers = ladderTiers(ladder).map((tier) => tier.label);
    await prepareInfrastructure(context, infrastructure, (names) => topicDefinitions(names, { dedupWindowMs: env.DEDUP_WINDOW, retryTiers }));

    const config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix: `${namespace}-router` });
    await config.start();
    onShutdown('config', () => config.stop());
    readiness.set('config', true);

    const transactionalId = `${namespace}-router-${env.INSTANCE_ID}`;
    const output = new TransactionalOutput({ kafka, transactionalId, logger });
    await output.start(context.signal);
    onShutdown('producer', () => output.stop());

    const dedup = new DedupStore({
      kafka,
      codec,
      logger,
      topic: topics.dedup,
      groupPrefix: `${namespace}-router`,
      windowMs: env.DEDUP_WINDOW,
      maxEntries: env.DEDUP_MAX_ENTRIES,
      maxBytes: env.DEDUP_MAX_BYTES,
      // Evictions happen only once start() reads entries, after routerMetrics exists.
      onCapacityEviction: () => routerMetrics.dedupCapacityEvictions.inc(),
    });
    const routerMetrics = createRouterMetrics(metrics.registry, () => dedup.state.size, [topics.ingest, topics.ingestOverflow]);
    await dedup.start();
    onShutdown('dedup', () => dedup.stop());
    readiness.set('dedup', true);
    logger.info({ entries: dedup.state.size, windowMs: env.DEDUP_WINDOW }, 'dedup state loaded');

    // The main ingest topic, then the overflow lane that ingest fills with what a source
    // sends past its INGEST_SOURCE_RATE; each has its own consumer group.
    const lanes = [
      { topic: topics.ingest, groupId: `${namespace}-router`, name: 'consumer' },
      { topic: topics.ingestOverflow, groupId: `${namespace}-router-overflow`, name: 'overflow consumer' },
    ];
    // Measured at the broker, not from the router's own fetches: a router stuck on its
    // transactions fetches nothing and would never see the backlog grow behind it.
    const lag = new ConsumerLagProbe({ kafka, logger, groups: lanes.map(({ groupId, topic }) => ({ groupId, topic })) });
    await lag.start();
    onShutdown('lag probe', () => lag.stop());
    createConsumerLagGauge(metrics.registry, lag);

    // The dispatchers' circuit states: a destination whose circuit is open or half-open at all
    // of them is routed through the retry lane, or deferred onto the ladder (placement.ts). Read
    // beside routing, never waited for: without it, everything goes to the first-attempt topic.
    const health = new DestinationHealthTable({ kafka, codec, logger, topic: topics.destinationHealth, groupPrefix: `${namespace}-router` });
    health.start().catch((error: unknown) => logger.warn({ err: error }, 'destination health unavailable; routing every delivery to the first-attempt topic'));
    onShutdown('destination health', () => health.stop());

    const pipeline = new RouterPipeline({
      kafka,
      codec,
      topics,
      config,
      freshness: new ConfigFreshness({ view: config, logger, timeoutMs: CONFIG_FRESHNESS_TIMEOUT_MS }),
      configVersion: () => config.version,
      dedup,
      output,
      metrics: routerMetrics,
      logger,
      readiness,
      lanes,
      health,
      ladder,
      dedupRecordKey: transactionalId,
      maxBatch: env.ROUTER_MAX_BATCH,
      sourceRate: env.ROUTER_SOURCE_RATE,
      maxBatchBytes: env.ROUTER_MAX_BATCH_BYTES,
      sessionTimeoutMs: env.ROUTER_SESSION_TIMEOUT,
    });
    // Registered last so it runs first at shutdown: the in-flight transaction finishes
    // before the producer disconnects.
    onShutdown('consumer', () => pipeline.stop());
    await pipeline.start();
  },
});
