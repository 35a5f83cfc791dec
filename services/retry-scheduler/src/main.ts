/**
 * retry-scheduler — moves retry records to the retry lane (<ns>.deliveries.retries.v1) when they are due,
 * one consumer per tier topic so a long tier never holds up a short one, and dead-letters
 * those whose attempt would fall outside the retry window (see README.md).
 *
 * Start-up order matters: every tier's transactional producer registers its id before
 * any tier is read, so a crashed predecessor's open transaction is aborted at once and
 * does not hold back the read_committed consumers. The scheduler needs no destination
 * config: the window is the only rule it applies, and the dispatcher reads the config at
 * attempt time. It reads the dispatchers' destination health, to defer again rather than
 * release what a dispatcher would only defer (a circuit open everywhere). It serves the tier
 * topics of its namespace that its ladder does not have, too — found at start-up and every
 * RETRY_SCHEDULER_TIER_SCAN_INTERVAL after: a tier taken out of RETRY_LADDER, or written by a
 * service started later with another ladder, holds records that must be released or expired.
 */
import { ConsumerLagProbe, createHttpServer, createInfrastructure, DestinationHealthTable, ladderFromSettings, ladderTiers, listen, lowerPriority, prepareInfrastructure, runService, topicDefinitions, TransactionalOutput, untilSuccess, withAdmin } from '@tributary/shared';
import { strayTiers } from './release-plan.js';
import { createSchedulerMetrics, zeroTierMetrics } from './metrics.js';
import { schedulerEnv } from './settings.js';
import { TierScheduler } from './tier-scheduler.js';

await runService({
  name: 'retry-scheduler',
  env: schedulerEnv,
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    lowerPriority(env.RETRY_SCHEDULER_NICE, 'RETRY_SCHEDULER_NICE', logger);
    readiness.set('producers', false);
    const namespace = env.TOPIC_NAMESPACE;
    const ladder = ladderFromSettings(env);
    const ladderLabels = ladderTiers(ladder).map((tier) => tier.label);
    // Served first: while Kafka is away at start-up the scheduler waits, unready but alive.
    const app = createHttpServer({ logger, metrics, readiness });
    await listen(app, env.HTTP_PORT, env.HTTP_HOST);
    onShutdown('http', () => app.close());
    const infrastructure = createInfrastructure(context);
    const { kafka, codec, topics } = infrastructure;
    await prepareInfrastructure(context, infrastructure, (names) => topicDefinitions(names, { retryTiers: ladderLabels }));
    // Tier topics this ladder does not have (an earlier RETRY_LADDER's, or another service's)
    // are served too, or what waits on them would never be released (release-plan.ts).
    const topicList = await untilSuccess(() => withAdmin(kafka, (admin) => admin.listTopics()), { logger, doing: 'listing the retry tier topics', signal: context.signal });
    const stray = strayTiers(topicList, topics.retryTier, ladderLabels);
    if (stray.length > 0) {
      logger.warn({ stray, ladder: ladderLabels }, 'serving retry tier topics that RETRY_LADDER does not have: their records are released or expired as any tier’s; give every service the same RETRY_LADDER');
    }
    // Grows when a scan finds a tier topic created after start-up; the gauges read it at each scrape.
    const tiers = [...ladderLabels, ...stray];

    const groupOf = (tier: string) => `${namespace}-retry-scheduler-${tier}`;
    const pendingGroups = tiers.map((tier) => ({ tier, topic: topics.retry(tier), groupId: groupOf(tier) }));
    const pending = new ConsumerLagProbe({ kafka, logger, groups: pendingGroups });
    await pending.start();
    onShutdown('pending-records admin', () => pending.stop());

    const outputFor = (tier: string) => new TransactionalOutput({ kafka, transactionalId: `${namespace}-retry-${tier}-${env.INSTANCE_ID}`, logger });
    const outputs = new Map(tiers.map((tier) => [tier, outputFor(tier)]));
    await Promise.all([...outputs.values()].map((output) => output.start(context.signal)));
    onShutdown('producers', async () => void (await Promise.all([...outputs.values()].map((output) => output.stop()))));
    readiness.set('producers', true);

    // The dispatchers' circuit states: a due record of a destination whose circuit is open at
    // every one of them is deferred again rather than released. Read beside releasing, never
    // waited for: without it, every due record is released.
    const health = new DestinationHealthTable({ kafka, codec, logger, topic: topics.destinationHealth, groupPrefix: `${namespace}-retry-scheduler` });
    health.start().catch((error: unknown) => logger.warn({ err: error }, 'destination health unavailable; releasing every due record'));
    onShutdown('destination health', () => health.stop());

    const schedulers = new Map<string, TierScheduler>();
    const schedulerMetrics = createSchedulerMetrics(metrics.registry, tiers, (tier) => topics.retry(tier), {
      heldHeads: (tier) => schedulers.get(tier)?.heldHeads() ?? [],
      pending,
      now: Date.now,
    });
    const schedulerFor = (tier: string, output: TransactionalOutput) =>
      new TierScheduler({
        kafka,
        codec,
        topics,
        tier,
        ladder,
        output,
        metrics: schedulerMetrics,
        logger,
        readiness,
        groupId: groupOf(tier),
        maxBatch: env.RETRY_SCHEDULER_MAX_BATCH,
        maxRecordBytes: env.KAFKA_MAX_RECORD_BYTES,
        sessionTimeoutMs: env.RETRY_SCHEDULER_SESSION_TIMEOUT,
        health,
      });
    for (const tier of tiers) schedulers.set(tier, schedulerFor(tier, outputs.get(tier)!));
    // Registered after the producers so it runs before them at shutdown: timers are cleared
    // and a release in flight commits before the producers disconnect. The maps are read then,
    // so tiers a scan added are stopped too.
    onShutdown('tier consumers', async () => void (await Promise.all([...schedulers.values()].map((scheduler) => scheduler.stop()))));
    await Promise.all([...schedulers.values()].map((scheduler) => scheduler.start()));
    logger.info({ tiers, retryWindowMs: ladder.windowMs, groups: tiers.map(groupOf) }, 'releasing retries');

    // A tier topic that appears later (a router or dispatcher started with another ladder) is
    // served from the next scan, not from this process's next restart. A scan the broker cannot
    // answer is tried again at the next one; a tier whose start fails is dropped and found again.
    const serveStray = async (tier: string): Promise<void> => {
      const output = outputFor(tier);
      const scheduler = schedulerFor(tier, output);
      try {
        await output.start(context.signal);
        zeroTierMetrics(schedulerMetrics, tier, topics.retry(tier));
        await scheduler.start();
        // Shutdown began meanwhile: the handlers have read the maps without this tier.
        if (context.signal.aborted) throw new Error('shutting down');
      } catch (error) {
        await scheduler.stop().catch(() => undefined);
        await output.stop().catch(() => undefined);
        throw error;
      }
      outputs.set(tier, output);
      schedulers.set(tier, scheduler);
      tiers.push(tier);
      pendingGroups.push({ tier, topic: topics.retry(tier), groupId: groupOf(tier) });
    };
    let scanning = false;
    const scanForStrays = async (): Promise<void> => {
      if (scanning || context.signal.aborted) return;
      scanning = true;
      try {
        const found = strayTiers(await withAdmin(kafka, (admin) => admin.listTopics()), topics.retryTier, tiers);
        for (const tier of found) {
          if (context.signal.aborted) return;
          logger.warn({ tier, ladder: ladderLabels }, 'serving a retry tier topic that appeared after start-up and RETRY_LADDER does not have; give every service the same RETRY_LADDER');
          await serveStray(tier);
        }
      } catch (error) {
        logger.warn({ err: error }, 'could not look for new retry tier topics; trying again at the next scan');
      } finally {
        scanning = false;
      }
    };
    const scan = setInterval(() => void scanForStrays(), env.RETRY_SCHEDULER_TIER_SCAN_INTERVAL);
    // Runs first at shutdown (registered last): no tier is added while the others stop.
    onShutdown('tier scan', () => clearInterval(scan));
  },
});
