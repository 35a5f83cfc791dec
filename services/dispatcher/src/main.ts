/**
 * dispatcher — POSTs each delivery to its destination's webhook URLs, signed as the
 * Webhooks spec says, and records what happened: delivered, a retry record on a tier
 * topic, or a dead letter. Wires settings, Kafka, config and the ops HTTP server; the
 * decisions live in the pure modules beside this file.
 */
import {
  ConfigFreshness,
  ConfigView,
  ConsumerLagProbe,
  createConsumerLagGauge,
  createHttpServer,
  createInfrastructure,
  ladderFromSettings,
  ladderTiers,
  listen,
  prepareInfrastructure,
  runService,
  topicDefinitions,
  TransactionalOutput,
} from '@tributary/shared';
import { Dispatcher, laneSources } from './dispatcher.js';
import { createDispatcherMetrics } from './metrics.js';
import { HostLookup } from './host-lookup.js';
import { breakerFromSettings, dispatcherEnv, dnsTryTimeoutMs } from './settings.js';
import { WebhookClient } from './webhook-client.js';

/** Time kept back from SHUTDOWN_TIMEOUT for committing and disconnecting after the drain. */
const SHUTDOWN_MARGIN_MS = 5000;

await runService({
  name: 'dispatcher',
  env: dispatcherEnv,
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    readiness.set('config', false);
    readiness.set('producer', false);
    const ladder = ladderFromSettings(env);
    const retryTiers = ladderTiers(ladder).map((tier) => tier.label);
    // Served first: while Kafka is away at start-up the dispatcher waits, unready but alive.
    const app = createHttpServer({ logger, metrics, readiness });
    await listen(app, env.HTTP_PORT, env.HTTP_HOST);
    onShutdown('http', () => app.close());
    const infrastructure = createInfrastructure(context);
    const { kafka, codec, topics } = infrastructure;
    await prepareInfrastructure(context, infrastructure, (names) => topicDefinitions(names, { retryTiers }));
    const groupPrefix = `${env.TOPIC_NAMESPACE}-dispatcher`;
    const config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix });
    await config.start();
    onShutdown('config', () => config.stop());
    readiness.set('config', true);

    const freshness = new ConfigFreshness({ view: config, logger, timeoutMs: 5000 });
    const dispatcherMetrics = createDispatcherMetrics(metrics, Object.values(laneSources(topics, groupPrefix)).map(({ topic }) => topic));
    const client = new WebhookClient({
      timeoutMs: env.WEBHOOK_TIMEOUT,
      allowPrivateNetworks: env.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      connectionsPerUrl: env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
      hosts: new HostLookup({
        servers: env.DELIVERY_DNS_SERVERS,
        tryTimeoutMs: dnsTryTimeoutMs(env.WEBHOOK_TIMEOUT),
        tries: 2,
        observe: (answer) => dispatcherMetrics.hostLookups.inc({ answer }),
      }),
    });
    onShutdown('webhook client', () => client.close());
    // The pools of a deleted destination, or of a URL it no longer has, are closed; the rest are kept warm.
    config.onChange(() => void client.forgetExcept(config.state().destinations));
    if (env.DELIVERY_ALLOW_PRIVATE_NETWORKS) logger.warn('DELIVERY_ALLOW_PRIVATE_NETWORKS=true: webhooks may reach loopback and private addresses');

    // One transactional id per instance, stable across restarts: a restarted process fences
    // its predecessor and the broker aborts whatever transaction that one left open.
    const output = new TransactionalOutput({
      kafka,
      transactionalId: `${env.TOPIC_NAMESPACE}-dispatcher-${env.INSTANCE_ID}`,
      logger,
      onUsable: (usable) => readiness.set('producer', usable),
    });
    await output.start(context.signal);
    onShutdown('producer', () => output.stop());

    const lag = new ConsumerLagProbe({ kafka, logger, groups: Object.values(laneSources(topics, groupPrefix)) });
    await lag.start();
    onShutdown('lag probe', () => lag.stop());
    createConsumerLagGauge(metrics.registry, lag);

    const dispatcher = new Dispatcher({
      kafka,
      codec,
      topics,
      config,
      freshness,
      client,
      output,
      logger,
      metrics: dispatcherMetrics,
      readiness,
      ladder,
      breaker: breakerFromSettings(env),
      limits: {
        maxInFlight: env.DELIVERY_MAX_IN_FLIGHT,
        maxInFlightPerDestination: env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
        maxDestinationShare: env.DELIVERY_MAX_DESTINATION_SHARE,
        maxQueueWaitMs: env.DELIVERY_MAX_QUEUE_WAIT,
        maxBuffered: env.DELIVERY_MAX_BUFFERED,
        maxBufferedBytes: env.DELIVERY_MAX_BUFFERED_BYTES,
        maxStagedBytes: env.DELIVERY_MAX_STAGED_BYTES,
        maxRecordBytes: env.KAFKA_MAX_RECORD_BYTES,
      },
      commitIntervalMs: env.DELIVERY_COMMIT_INTERVAL,
      sessionTimeoutMs: env.DELIVERY_SESSION_TIMEOUT,
      delayBeforeCommitMs: env.DELIVERY_TEST_COMMIT_DELAY,
      disableOnGone: env.DELIVERY_DISABLE_ON_GONE,
      instanceId: env.INSTANCE_ID,
      // The namespace is the consumer groups' prefix, like every topic's.
      groupId: groupPrefix,
      onFatal: (error) => {
        logger.fatal({ err: error }, 'stopping so that unsettled deliveries are read again after a restart');
        process.kill(process.pid, 'SIGTERM');
      },
    });
    if (env.DELIVERY_TEST_COMMIT_DELAY > 0) logger.warn({ delayMs: env.DELIVERY_TEST_COMMIT_DELAY }, 'DELIVERY_TEST_COMMIT_DELAY is set: a test-only fault injection that slows every commit');
    await dispatcher.start();
    onShutdown('dispatcher', () => dispatcher.stop(Math.max(1000, env.SHUTDOWN_TIMEOUT - SHUTDOWN_MARGIN_MS)));
    logger.info(
      {
        webhookTimeoutMs: env.WEBHOOK_TIMEOUT,
        retryTiers,
        retryWindowMs: ladder.windowMs,
        maxInFlight: env.DELIVERY_MAX_IN_FLIGHT,
        maxInFlightPerDestination: env.DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION,
        circuit: breakerFromSettings(env),
        disableOnGone: env.DELIVERY_DISABLE_ON_GONE,
      },
      'dispatching deliveries',
    );
  },
});
