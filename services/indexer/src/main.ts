/**
 * indexer — the delivery log: indexes `<ns>.attempts.v1` and `<ns>.ingest.v1` into SQL
 * (PostgreSQL when DELIVERY_LOG_DATABASE_URL is set, else the embedded PGlite in
 * DELIVERY_LOG_DATA_DIR) and serves the admin read API over it on its own port (see README.md).
 *
 * Start-up order: the HTTP server first (alive, unready, while Kafka or the database is
 * away); the database opened and migrated; the config topic read (routing decisions need
 * it); the transactional producer registered (a crashed predecessor's open transaction is
 * aborted before anything is read); then the consumer.
 */
import {
  ConfigFreshness,
  ConfigView,
  ConsumerLagProbe,
  createHttpServer,
  createInfrastructure,
  listen,
  lowerPriority,
  prepareInfrastructure,
  runService,
  topicDefinitions,
  TransactionalOutput,
  untilSuccess,
} from '@tributary/shared';
import { registerReadApi } from './api/routes.js';
import { IndexerConsumer } from './consumer.js';
import { DatabaseHealth } from './db-health.js';
import { createIndexerMetrics } from './metrics.js';
import { RetentionSweeper } from './retention.js';
import { describeDatabase, indexerEnv } from './settings.js';
import { openDatabase } from './sql/open.js';
import { DeliveryLogStore } from './store/store.js';

/** How long a message's routing waits for the config view to catch up before it is decided with the view as it stands. */
const CONFIG_FRESHNESS_TIMEOUT_MS = 5_000;

await runService({
  name: 'indexer',
  env: indexerEnv,
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    lowerPriority(env.INDEXER_NICE, 'INDEXER_NICE', logger);
    // 'consumer' too, from the start: ready means indexing, not only started.
    for (const check of ['database', 'config', 'producer', 'consumer']) readiness.set(check, false);
    const namespace = env.TOPIC_NAMESPACE;
    let store: DeliveryLogStore | undefined;
    let config: ConfigView | undefined;

    const app = createHttpServer({ logger, metrics, readiness });
    registerReadApi(app, {
      token: env.ADMIN_TOKEN,
      store: () => store,
      destinationIds: () => config?.state().destinations.map((destination) => destination.id) ?? [],
      retentionMs: env.DELIVERY_LOG_RETENTION,
      logger,
    });
    await listen(app, env.HTTP_PORT, env.HTTP_HOST);
    onShutdown('http', () => app.close());
    if (env.ADMIN_TOKEN === undefined) logger.info('read API disabled: ADMIN_TOKEN is not set');

    const database = describeDatabase(env);
    const db = await openDatabase(env, (error) => logger.warn({ err: error }, 'a database connection failed; the next query opens another'));
    onShutdown('database', () => db.close());
    const opened = new DeliveryLogStore(db);
    const applied = await untilSuccess(() => opened.migrate(), { logger, doing: `opening the delivery log (${database})`, signal: context.signal });
    store = opened;
    readiness.set('database', true);
    logger.info({ database, migrationsApplied: applied }, 'delivery log open');
    const health = new DatabaseHealth({ db, readiness, logger });
    health.start();
    onShutdown('database health', () => health.stop());

    const infrastructure = createInfrastructure(context);
    const { kafka, codec, topics } = infrastructure;
    await prepareInfrastructure(context, infrastructure, (names) => topicDefinitions(names));

    config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix: `${namespace}-indexer` });
    await config.start();
    onShutdown('config', () => config?.stop());
    readiness.set('config', true);

    const output = new TransactionalOutput({ kafka, transactionalId: `${namespace}-indexer-${env.INSTANCE_ID}`, logger, onUsable: (usable) => readiness.set('producer', usable) });
    await output.start(context.signal);
    onShutdown('producer', () => output.stop());

    const groupId = `${namespace}-indexer`;
    const lag = new ConsumerLagProbe({ kafka, logger, groups: [topics.attempts, topics.ingest, topics.ingestOverflow].map((topic) => ({ groupId, topic })) });
    await lag.start();
    onShutdown('lag probe', () => lag.stop());
    const indexerMetrics = createIndexerMetrics(metrics.registry, [topics.attempts, topics.ingest, topics.ingestOverflow], lag);

    const retention = new RetentionSweeper({ store: opened, retentionMs: env.DELIVERY_LOG_RETENTION, logger, metrics: indexerMetrics });
    retention.start();
    onShutdown('retention', () => retention.stop());

    const consumer = new IndexerConsumer({
      kafka,
      codec,
      topics,
      config,
      freshness: new ConfigFreshness({ view: config, logger, timeoutMs: CONFIG_FRESHNESS_TIMEOUT_MS }),
      store: opened,
      output,
      metrics: indexerMetrics,
      logger,
      readiness,
      groupId,
      maxBatch: env.INDEXER_MAX_BATCH,
      maxBatchBytes: env.INDEXER_MAX_BATCH_BYTES,
      sessionTimeoutMs: env.INDEXER_SESSION_TIMEOUT,
    });
    // Registered last so it runs first at shutdown: the chunk in flight finishes and commits
    // before the producer and the database close.
    onShutdown('consumer', () => consumer.stop());
    await consumer.start();
    logger.info({ database, groupId, topics: [topics.attempts, topics.ingest, topics.ingestOverflow], retentionMs: env.DELIVERY_LOG_RETENTION }, 'indexing');
  },
});
