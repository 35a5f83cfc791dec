/**
 * The retry scheduler's Prometheus series. Counters and the due-lag histogram move only
 * after the transaction that released (or expired) the records committed, so records
 * handled again after an abort are not counted twice. The ones fed once per record are
 * tallies (shared `tally-metrics`): a failing destination's backlog is re-deferred thousands
 * of times a second.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { createConsumerLagGauge, createQuarantineCounter, TallyCounter, TallyHistogram, zeroQuarantineSeries, type ConsumerLagProbe } from '@tributary/shared';
import { oldestHeadAgeSeconds } from './release-plan.js';

/**
 * Seconds a retry was released after its due time: fine below a second, where a healthy
 * scheduler is, and up to hours for one that was down (the alert fires at 30 s).
 */
export const DUE_LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export interface SchedulerMetrics {
  released: TallyCounter;
  deferred: TallyCounter;
  expired: TallyCounter;
  dueLag: TallyHistogram;
  deadLetters: TallyCounter;
  transactionFailures: Counter<'tier'>;
  unreadable: Counter<'tier'>;
  quarantined: Counter<'topic' | 'reason'>;
}

export interface SchedulerGauges {
  /** Write times of the records each tier holds at the head of a paused partition. */
  heldHeads(tier: string): Iterable<number>;
  /** The tier groups' lag; on tier topics that is the retries waiting. */
  pending: ConsumerLagProbe<{ tier: string; groupId: string; topic: string }>;
  now(): number;
}

/** `tierTopic`: the topic a tier's records wait on, whose quarantine series start at 0. */
export function createSchedulerMetrics(registry: Registry, tiers: readonly string[], tierTopic: (tier: string) => string, gauges: SchedulerGauges): SchedulerMetrics {
  const registers = [registry];
  const metrics: SchedulerMetrics = {
    released: new TallyCounter({
      name: 'tributary_retries_released_total',
      help: 'Retry records moved to the retry lane when due, by tier.',
      labelNames: ['tier'],
      registry,
    }),
    deferred: new TallyCounter({
      name: 'tributary_retries_deferred_total',
      help: 'Due retry records deferred again up the ladder instead of released, by tier: their destination\'s circuit was open at every dispatcher for at least another second.',
      labelNames: ['tier'],
      registry,
    }),
    expired: new TallyCounter({
      name: 'tributary_retries_expired_total',
      help: 'Retry records dead-lettered as expired instead of released (the next attempt would fall outside the window), by the tier they waited on.',
      labelNames: ['tier'],
      registry,
    }),
    dueLag: new TallyHistogram({
      name: 'tributary_retry_due_lag_seconds',
      help: 'How late a retry was released: commit of its release minus its due time, by tier.',
      labelNames: ['tier'],
      buckets: DUE_LAG_BUCKETS,
      registry,
    }),
    deadLetters: new TallyCounter({
      name: 'tributary_dead_letters_total',
      help: 'Dead letters written by the scheduler (retries that would fall outside the window), by reason.',
      labelNames: ['reason'],
      registry,
    }),
    transactionFailures: new Counter({
      name: 'tributary_retry_transaction_failures_total',
      help: 'Release transactions that failed and were aborted (their records are handled again), by tier.',
      labelNames: ['tier'],
      registers,
    }),
    unreadable: new Counter({
      name: 'tributary_retry_unreadable_records_total',
      help: 'Records on a tier topic that could not be read (undecodable, or carrying a time no date holds) and were quarantined, by tier.',
      labelNames: ['tier'],
      registers,
    }),
    quarantined: createQuarantineCounter(registry, []),
  };
  metrics.deadLetters.child('expired');
  for (const tier of tiers) zeroTierMetrics(metrics, tier, tierTopic(tier));

  new Gauge({
    name: 'tributary_retry_oldest_record_age_seconds',
    help: 'Age (since it was written) of the oldest record held at the head of a paused partition, by tier; 0 when none is held.',
    labelNames: ['tier'],
    registers,
    collect() {
      const now = gauges.now();
      for (const tier of tiers) this.set({ tier }, oldestHeadAgeSeconds(gauges.heldHeads(tier), now));
    },
  });
  new Gauge({
    name: 'tributary_retry_pending_records',
    help: 'Records on each tier topic not yet released (end offset minus committed offset, summed over partitions).',
    labelNames: ['tier'],
    registers,
    async collect() {
      const lags = await gauges.pending.measure();
      this.reset();
      for (const tier of tiers) this.set({ tier }, lags.filter((lag) => lag.tier === tier).reduce((sum, lag) => sum + lag.lag, 0));
    },
  });
  createConsumerLagGauge(
    registry,
    gauges.pending,
    'Records behind the end of the partition, per consumer group, topic and partition. On tier topics this is the retries waiting, not a consumer falling behind.',
  );
  return metrics;
}

/**
 * A tier's series exist from the start (at 0), so a rate over them is defined before its first
 * release, and the first record quarantined from its topic is an increase from 0 (a series that
 * first appeared at 1 would be one `increase()` cannot see).
 */
export function zeroTierMetrics(metrics: SchedulerMetrics, tier: string, topic: string): void {
  zeroQuarantineSeries(metrics.quarantined, topic);
  metrics.released.child(tier);
  metrics.deferred.child(tier);
  metrics.expired.child(tier);
  metrics.transactionFailures.inc({ tier }, 0);
  metrics.unreadable.inc({ tier }, 0);
  metrics.dueLag.child(tier);
}
