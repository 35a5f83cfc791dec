/**
 * `npm run bench`: the end-to-end benchmark (README.md beside this file).
 *
 * Starts — or reuses — the stack, runs the four real services as child processes in a fresh
 * namespace, a webhook receiver and a load generator each in its own process, and:
 *
 *   warm-up   1,000 events/s for 5 s (also proves the destination reached the router)
 *   idle      10 s without load: the pipeline's fixed CPU cost
 *   limits    undici POSTs to the receiver; kafkajs produce → consume on one topic
 *   ramp      from 2,000 events/s up by 25 % every 10 s while the pipeline keeps up (ramp.ts)
 *   (a)       60 s at the highest rate the ramp sustained
 *   (b)       60 s at 1,000 events/s
 *
 * with a drain (every accepted message delivered) between phases. Writes
 * test/bench/results/<timestamp>.{json,md,svg} and latest.*, and prints the table.
 */
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';
import { acquireStack } from '@tributary/deploy/acquire';
import { topicNames, type TopicNames } from '@tributary/schemas';
import { createKafka, createLogger, ensureTopics } from '@tributary/shared';
import { REPO_ROOT, startService, type RunningService } from '../harness/services.js';
import { reconcile } from './accounting.js';
import { adminCaller, benchServiceEnv, deleteNamespace, SHARED_SECRET } from './pipeline.js';
import { BitSet } from './bitset.js';
import { renderChart, type ChartPhase, type ChartPoint } from './chart.js';
import { monotonicMicros, PROFILE_DIR, profilingArgs, readProfileOf, windowedProfile } from './profile-files.js';
import { LatencyHistogram, type HistogramJson, type LatencySummary } from './histogram.js';
import { BATCH_SIZE } from './messages.js';
import { runNoisyNeighbour } from './noisy-neighbour.js';
import { parseAudienceOptions, runAudienceBench } from './audience-sync.js';
import { DELIVERY_PATH, parseNoisyOptions, parseOptions, scenarioOf, SERVICES, settingsNote, USAGE, type BenchOptions, type BenchService } from './options.js';
import { cpuBudget } from './cpu-budget.js';
import { findStackJvms } from './proc.js';
import { forkChild, ProcessTable, stopChild, stopOnSignal, type Child } from './children.js';
import { groupLag, indexerLag, SETTLED_LAG_RECORDS, waitUntilAtMost } from './kafka-lag.js';
import { kafkaRequestRates, readKafkaRequests, readTransactionCounters, transactionRates } from './service-metrics.js';
import type {
  GeneratorCommand,
  GeneratorFinal,
  GeneratorReport,
  HttpLimitResult,
  KafkaLimitProgress,
  KafkaLimitReady,
  KafkaLimitResult,
  ReceiverCommand,
  ReceiverFinal,
  ReceiverReport,
} from './protocol.js';
import { judgeStep, nextRampAction, roundRate, type LagSample, type StepVerdict } from './ramp.js';
import { int, ms, renderMarkdown } from './report.js';
import type { BenchResult, KafkaLag, Limits, PhaseResult, ProcessUsage, RampStep } from './result.js';

const RESULTS_DIR = join(REPO_ROOT, 'test', 'bench', 'results');
const WARMUP = { rate: 1000, seconds: 5 };
const DRAIN_TIMEOUT_MS = 30_000;
/** Holds tried again lower when the one at the ramp's rate is not sustained. */
const MAX_HOLD_RETRIES = 2;
const FINAL_DRAIN_TIMEOUT_MS = 60_000;
const PROGRESS_EVERY_MS = 5000;
const IDLE_SETTLE_SECONDS = 10;
const IDLE_SECONDS = 10;
const HTTP_LIMIT_CONNECTIONS = 64;
const KAFKA_LIMIT_RECORD_BYTES = 500;
const ORCHESTRATOR = 'bench orchestrator (reads the service logs)';
const BROKER = 'Kafka broker (JVM)';
const REGISTRY = 'schema registry (JVM)';
const RECEIVER = 'webhook receiver';

const t0 = Date.now();
const elapsed = (at = Date.now()) => (at - t0) / 1000;
const say = (line: string): void => void process.stdout.write(`[${elapsed().toFixed(0).padStart(4)} s] ${line}\n`);
const sleep = (msToWait: number) => new Promise((resolve) => setTimeout(resolve, msToWait));

// ---------------------------------------------------------------------------------------
// What the children report, accumulated

interface Counters {
  at: number;
  sent: number;
  sentLate: number;
  accepted: number;
  refused: number;
  delivered: number;
  duplicates: number;
  queued: number;
}

class Collector {
  readonly counters: Counters = { at: Date.now(), sent: 0, sentLate: 0, accepted: 0, refused: 0, delivered: 0, duplicates: 0, queued: 0 };
  /** Per second of the run: counts and durations of the windows that ended in it. */
  private readonly seconds = new Map<number, { offered: number; accepted: number; acceptedMs: number; delivered: number; deliveredMs: number; latency: LatencyHistogram }>();
  offered = 0;
  /** Latency of arrivals since the last reset, for the progress lines. */
  progressLatency = new LatencyHistogram();
  /** Latency of what arrived since the current measured window began (a ramp step's). */
  windowLatency = new LatencyHistogram();

  onReceiver(report: ReceiverReport): void {
    if (report.kind !== 'window') return;
    this.counters.delivered += report.delivered;
    this.counters.duplicates += report.duplicates;
    this.progressLatency.merge(report.latency);
    this.windowLatency.merge(report.latency);
    const second = this.second(report.toMs);
    second.delivered += report.delivered;
    second.deliveredMs += report.toMs - report.fromMs;
    second.latency.merge(report.latency);
  }

  onGenerator(report: GeneratorReport): void {
    if (report.kind !== 'window') return;
    const c = this.counters;
    c.sent += report.sent;
    c.sentLate += report.sentLate;
    c.accepted += report.accepted;
    c.refused += report.refused;
    c.queued = report.queued;
    const second = this.second(report.toMs);
    second.accepted += report.accepted;
    second.acceptedMs += report.toMs - report.fromMs;
    second.offered = this.offered;
  }

  snapshot(): Counters {
    return { ...this.counters, at: Date.now() };
  }

  backlog(): number {
    return this.counters.accepted - this.counters.delivered;
  }

  timeline(): ChartPoint[] {
    return [...this.seconds]
      .sort((a, b) => a[0] - b[0])
      .map(([t, s]) => {
        const point: ChartPoint = { t, offered: s.offered };
        if (s.acceptedMs > 0) point.accepted = (s.accepted * 1000) / s.acceptedMs;
        if (s.deliveredMs > 0) point.delivered = (s.delivered * 1000) / s.deliveredMs;
        if (s.latency.count > 0) {
          point.p50Ms = s.latency.percentile(50);
          point.p99Ms = s.latency.percentile(99);
        }
        return point;
      });
  }

  private second(toMs: number) {
    const t = Math.round((toMs - t0) / 1000);
    let second = this.seconds.get(t);
    if (!second) this.seconds.set(t, (second = { offered: this.offered, accepted: 0, acceptedMs: 0, delivered: 0, deliveredMs: 0, latency: new LatencyHistogram() }));
    return second;
  }
}

// ---------------------------------------------------------------------------------------
// Kafka consumer lag of the router and dispatcher groups (groupLag: kafka-lag.ts)

async function kafkaLag(admin: Admin, topics: TopicNames, withIndexer: boolean): Promise<KafkaLag> {
  const [router, routerOverflow, dispatcher, indexer] = await Promise.all([
    groupLag(admin, `${topics.namespace}-router`, topics.ingest),
    groupLag(admin, `${topics.namespace}-router-overflow`, topics.ingestOverflow),
    groupLag(admin, `${topics.namespace}-dispatcher`, topics.deliveries),
    withIndexer ? indexerLag(admin, topics) : 0,
  ]);
  return { router: router + routerOverflow, dispatcher, indexer };
}

/** What the ramp counts as the pipeline's Kafka lag: every consumer the run started, the indexer's included. */
const laggedRecords = (lag: KafkaLag) => lag.router + lag.dispatcher + lag.indexer;
const lagSample = (lag: KafkaLag): LagSample => ({ at: Date.now(), lag: laggedRecords(lag) });

/** How often a ramp step's measured window reads the lag: a dozen readings in the default 6 s. */
const LAG_SAMPLE_INTERVAL_MS = 500;

// ---------------------------------------------------------------------------------------
// Machine

function javaVersion(kafkaPid: number | undefined): string {
  let java = 'java';
  if (kafkaPid !== undefined) {
    try {
      java = readlinkSync(`/proc/${kafkaPid}/exe`);
    } catch {
      // Not ours to read (a container): the java on PATH is the best guess.
    }
  }
  // `java -version` writes to stderr.
  const { stdout, stderr } = spawnSync(java, ['-version'], { encoding: 'utf8' });
  return /version "([^"]+)"/.exec(`${stdout ?? ''}${stderr ?? ''}`)?.[1] ?? 'unknown';
}

// ---------------------------------------------------------------------------------------
// The run

function summaryOf(json: HistogramJson | undefined): LatencySummary {
  return (json ? LatencyHistogram.fromJSON(json) : new LatencyHistogram()).summary();
}

async function main(options: BenchOptions): Promise<void> {
  const startedAt = new Date(t0);
  const loadAverageStart = loadavg();
  say(`load average ${loadAverageStart.map((l) => l.toFixed(2)).join(' ')} on ${cpus().length} cores`);
  const stack = await acquireStack({ log: (line) => say(`stack: ${line}`) });
  say(`stack: ${stack.provider}, brokers ${stack.brokers.join(',')}, registry ${stack.registryUrl}`);

  const stamp = startedAt.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
  const namespace = `bench-${stamp.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  const topics = topicNames(namespace);
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'tributary-bench', logger: createLogger({ service: 'bench', level: 'warn' }) });
  const admin = kafka.admin();
  await admin.connect();

  const collector = new Collector();
  const processes = new ProcessTable();
  processes.add(ORCHESTRATOR, process.pid);
  const jvms = findStackJvms();
  for (const jvm of jvms) processes.add(jvm.role === 'kafka' ? BROKER : REGISTRY, jvm.pid);
  const notes: string[] = [];
  if (jvms.length === 0) notes.push('the Kafka and registry JVMs were not found in /proc (containers on another host?): their CPU is not in the tables');

  const services = new Map<BenchService, RunningService>();
  let receiver: Child<ReceiverReport> | undefined;
  let generator: Child<GeneratorReport> | undefined;
  const stopAll = async () => {
    await stopChild(generator?.process);
    await Promise.all([...services.values()].reverse().map((service) => service.stop()));
    await stopChild(receiver?.process);
  };
  stopOnSignal(say, stopAll);

  try {
    receiver = forkChild<ReceiverReport>('receiver.js', { BENCH_SHARED_SECRET: SHARED_SECRET }, (report) => collector.onReceiver(report));
    const sample = receiver.next('sample', 120_000);
    sample.catch(() => undefined);
    const { port: receiverPort } = await receiver.next('listening', 10_000);
    processes.add(RECEIVER, receiver.process.pid);

    const serviceEnv = benchServiceEnv(stack, namespace, options, options.settings);
    const withIndexer = options.services.includes('indexer');
    say(`starting ${options.services.join(', ')} in namespace ${namespace} (LOG_LEVEL=${options.logLevel}${options.profile ? `, ${options.profile} under --cpu-prof` : ''})`);
    await mkdir(PROFILE_DIR, { recursive: true });
    // All settle before a failure is thrown, so that the ones that did start are stopped.
    const started = await Promise.allSettled(
      options.services.map(async (name) => {
        const nodeArgs = options.profile === name ? profilingArgs() : [];
        services.set(name, await startService(name, { env: serviceEnv, nodeArgs, readyTimeoutMs: 90_000 }));
      }),
    );
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    for (const name of options.services) processes.add(name, services.get(name)!.process.pid);
    const ingest = services.get('ingest')!;

    const adminCall = adminCaller(ingest.url);
    const writeKey = `wk_${namespace}`;
    await adminCall('PUT', '/sources/bench', { name: 'Benchmark', writeKey });
    await adminCall('PUT', '/destinations/bench-hooks', {
      type: 'webhooks',
      sources: ['bench'],
      settings: { sharedSecret: SHARED_SECRET, webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hooks` }] },
    });
    // The router and dispatcher follow the config topic; the spec'd bound is one second.
    await sleep(2000);
    const partitions = (await admin.fetchTopicMetadata({ topics: [topics.ingest] })).topics[0]?.partitions.length ?? 0;
    say(`source and destination configured; ${partitions} partitions per topic`);

    generator = forkChild<GeneratorReport>('load-generator.js', { BENCH_INGEST_URL: ingest.url, BENCH_WRITE_KEY: writeKey }, (report) =>
      collector.onGenerator(report),
    );
    processes.add('load generator', generator.process.pid);
    const runStartCpu = processes.snapshot();
    const runStartAt = Date.now();
    const lagReading = async (): Promise<LagSample> => lagSample(await kafkaLag(admin, topics, withIndexer));
    /** Counters including everything the children have seen up to now. */
    const flushed = async (): Promise<Counters> => {
      const windows = Promise.all([receiver!.next('window', 10_000), generator!.next('window', 10_000)]);
      receiver!.process.send({ kind: 'flush' } satisfies ReceiverCommand);
      generator!.process.send({ kind: 'flush' } satisfies GeneratorCommand);
      await windows;
      return collector.snapshot();
    };
    const setRate = (rate: number, phase: string) => {
      collector.offered = rate;
      const command: GeneratorCommand = { kind: 'rate', rate, phase };
      generator!.process.send(command);
    };

    const drain = async (timeoutMs: number): Promise<{ drained: boolean; seconds: number }> => {
      const started = Date.now();
      let lastDelivered = -1;
      while (Date.now() - started < timeoutMs) {
        await sleep(250);
        const c = await flushed();
        const answered = c.sent === c.accepted + c.refused && c.queued === 0;
        // Messages of a batch answered 503 may arrive too, so also wait for arrivals to stop.
        if (answered && c.delivered >= c.accepted && c.delivered === lastDelivered) return { drained: true, seconds: (Date.now() - started) / 1000 };
        lastDelivered = c.delivered;
      }
      return { drained: false, seconds: (Date.now() - started) / 1000 };
    };

    const timelinePhases: ChartPhase[] = [];
    /** Runs `rate` for `seconds`, saying how it goes every PROGRESS_EVERY_MS; returns the lag read each time. */
    const runPhase = async (label: string, chartLabel: string, tag: string, rate: number, seconds: number): Promise<LagSample[]> => {
      const from = elapsed();
      setRate(rate, tag);
      collector.progressLatency = new LatencyHistogram();
      const end = Date.now() + seconds * 1000;
      let last = await flushed();
      const lagSamples: LagSample[] = [];
      while (Date.now() < end) {
        await sleep(Math.min(PROGRESS_EVERY_MS, end - Date.now()));
        const now = await flushed();
        const span = (now.at - last.at) / 1000 || 1;
        const lag = await kafkaLag(admin, topics, withIndexer);
        lagSamples.push(lagSample(lag));
        say(
          `${label} @ ${int(rate)}/s: accepted ${int((now.accepted - last.accepted) / span)}/s, delivered ${int((now.delivered - last.delivered) / span)}/s, ` +
            `backlog ${int(collector.backlog())}, lag router ${int(lag.router)} dispatcher ${int(lag.dispatcher)} indexer ${int(lag.indexer)}, p99 ${ms(collector.progressLatency.percentile(99))} ms`,
        );
        last = now;
      }
      setRate(0, tag);
      timelinePhases.push({ label: chartLabel, fromS: from, toS: elapsed() });
      return lagSamples;
    };

    // Warm-up: JIT, connections, and the proof that messages get through.
    say(`warm-up: ${WARMUP.rate}/s for ${WARMUP.seconds} s`);
    await runPhase('warm-up', 'warm-up', 'warmup', WARMUP.rate, WARMUP.seconds);
    const warm = await drain(DRAIN_TIMEOUT_MS);
    if (collector.counters.delivered === 0) throw new Error(`nothing reached the receiver after the warm-up; service logs: ${[...services.values()].map((s) => s.logFile).join(', ')}`);
    say(`warm-up ${warm.drained ? 'drained' : 'NOT drained'} (${int(collector.counters.delivered)} of ${int(collector.counters.accepted)} delivered)`);

    // The pipeline's fixed cost: every process with no load at all.
    const measureIdle = async (what: string): Promise<ProcessUsage[]> => {
      say(`${what}: ${IDLE_SECONDS} s without load`);
      const from = elapsed();
      const startCpu = processes.snapshot();
      await sleep(IDLE_SECONDS * 1000);
      const usage = processes.usage(startCpu, processes.snapshot(), IDLE_SECONDS, 0);
      timelinePhases.push({ label: 'idle', fromS: from, toS: elapsed() });
      say(`${what}: ${usage.map((u) => `${u.name.split(' (')[0]} ${int(u.corePercent)} %`).join(', ')}`);
      return usage;
    };
    const idle = await measureIdle('idle');

    // Limits of this machine, with the pipeline idle.
    const { body: sampleBody, signature } = await sample;
    const limits = await measureLimits(options, stack.brokers, topics, partitions, sampleBody, signature, receiverPort, admin, processes);
    timelinePhases.push({ label: 'limits', fromS: limits.fromS, toS: limits.toS });

    // Phase (a): ramp, then hold the highest sustained rate.
    const rampSteps: RampStep[] = [];
    const verdicts: StepVerdict[] = [];
    const rampFrom = elapsed();
    let action = nextRampAction(verdicts, options.ramp);
    while (action.kind === 'step') {
      const rate = action.rate;
      setRate(rate, `ramp-${rate}`);
      await sleep((options.stepSeconds - options.measuredSeconds) * 1000);
      const start = await flushed();
      collector.windowLatency = new LatencyHistogram();
      // Read through the window, so the step is judged by the lag's floor (ramp.ts lagFloorGrowth).
      const lagSamples: LagSample[] = [await lagReading()];
      const windowEnds = Date.now() + options.measuredSeconds * 1000;
      while (Date.now() < windowEnds) {
        await sleep(Math.min(LAG_SAMPLE_INTERVAL_MS, windowEnds - Date.now()));
        lagSamples.push(await lagReading());
      }
      const end = await flushed();
      const lagEnd = lagSamples[lagSamples.length - 1]!.lag;
      const stepLatency = collector.windowLatency;
      const verdict = judgeStep(
        {
          targetRate: rate,
          seconds: (end.at - start.at) / 1000,
          sent: end.sent - start.sent,
          sentLate: end.sentLate - start.sentLate,
          accepted: end.accepted - start.accepted,
          refused: end.refused - start.refused,
          delivered: end.delivered - start.delivered,
          backlogStart: start.accepted - start.delivered,
          backlogEnd: end.accepted - end.delivered,
          kafkaLagSamples: lagSamples,
          latencyP99Ms: stepLatency.count > 0 ? stepLatency.percentile(99) : undefined,
        },
        options.ramp.tolerance,
        options.ramp.maxP99Ms,
        options.ramp.lagSlackSeconds,
      );
      verdicts.push(verdict);
      rampSteps.push({ ...verdict, kafkaLagEnd: lagEnd, backlogEnd: end.accepted - end.delivered });
      say(
        `ramp ${int(rate)}/s: accepted ${int(verdict.acceptedRate)}/s, delivered ${int(verdict.deliveredRate)}/s, backlog +${int(verdict.backlogGrowth)}, ` +
          `Kafka lag +${int(verdict.kafkaLagGrowth)} → ${verdict.sustained ? 'sustained' : `not sustained (${verdict.reasons.join('; ')})`}`,
      );
      action = nextRampAction(verdicts, options.ramp);
      if (action.kind === 'step' && !verdict.sustained) {
        // The next step starts from an empty pipeline, not behind the failed step's queue: every
        // accepted message delivered, and the consumers that trail delivery (the indexer's) caught
        // up, or the next step is judged on the lag the failed one left.
        setRate(0, 'ramp');
        await drain(DRAIN_TIMEOUT_MS);
        const lag = await waitUntilAtMost(async () => laggedRecords(await kafkaLag(admin, topics, withIndexer)), SETTLED_LAG_RECORDS, DRAIN_TIMEOUT_MS);
        if (lag.last > SETTLED_LAG_RECORDS) notes.push(`the Kafka lag left by the ramp step at ${int(rate)}/s was still over ${int(SETTLED_LAG_RECORDS)} records ${DRAIN_TIMEOUT_MS / 1000} s after it; the next step started on top of it`);
      }
    }
    setRate(0, 'ramp');
    timelinePhases.push({ label: 'ramp', fromS: rampFrom, toS: elapsed() });
    const sustainableRate = action.rate;
    say(`ramp done: holding ${int(sustainableRate)}/s (${action.why}); draining first`);
    const rampDrain = await drain(DRAIN_TIMEOUT_MS);
    if (!rampDrain.drained) notes.push(`the ramp's backlog had not drained after ${DRAIN_TIMEOUT_MS / 1000} s; phase (a) started on top of it`);

    const readTransactions = () => readTransactionCounters(ingest.url, services.get('router')!.url);
    const readRequests = () => readKafkaRequests([...services].map(([name, service]) => ({ name, url: service.url })));
    const phase = async (name: string, label: string, tag: string, rate: number, seconds: number) => {
      const transactionsStart = await readTransactions();
      const requestsStart = await readRequests();
      const cpuStart = processes.snapshot();
      const start = await flushed();
      const fromMicros = monotonicMicros();
      const fromS = elapsed();
      const lagSamples = await runPhase(label, `${label.slice(0, 3)} ${int(rate)}/s`, tag, rate, seconds);
      const end = await flushed();
      const toMicros = monotonicMicros();
      const toS = elapsed();
      const cpuEnd = processes.snapshot();
      const transactionsEnd = await readTransactions();
      const requestsEnd = await readRequests();
      const backlogAtEnd = end.accepted - end.delivered;
      const drained = await drain(DRAIN_TIMEOUT_MS);
      const lag = await kafkaLag(admin, topics, withIndexer);
      const actualSeconds = (end.at - start.at) / 1000;
      const delivered = end.delivered - start.delivered;
      return {
        fromMicros,
        toMicros,
        fromS,
        toS,
        lagSamples,
        partial: {
          name,
          label,
          offeredRate: rate,
          seconds: actualSeconds,
          sentEvents: end.sent - start.sent,
          lateEvents: end.sentLate - start.sentLate,
          acceptedEvents: end.accepted - start.accepted,
          acceptedRate: (end.accepted - start.accepted) / actualSeconds,
          deliveredEvents: delivered,
          deliveredRate: delivered / actualSeconds,
          backlogAtEnd,
          kafkaLagAtEnd: lag,
          drainSeconds: drained.seconds,
          drained: drained.drained,
          processes: processes.usage(cpuStart, cpuEnd, actualSeconds, delivered),
          transactions: transactionRates(transactionsStart, transactionsEnd, actualSeconds),
          kafkaRequests: kafkaRequestRates(requestsStart, requestsEnd, actualSeconds, delivered),
        },
      };
    };

    const holdPhase = async (rate: number, tag: string) => {
      say(`phase (a): ${int(rate)}/s for ${options.holdSeconds} s`);
      collector.windowLatency = new LatencyHistogram();
      const held = await phase('max', `(a) max sustained, ${int(rate)}/s`, tag, rate, options.holdSeconds);
      const arrivals = collector.windowLatency;
      const p = held.partial;
      const verdict = judgeStep(
        {
          targetRate: rate,
          seconds: p.seconds,
          sent: p.sentEvents,
          sentLate: p.lateEvents,
          accepted: p.acceptedEvents,
          refused: 0,
          delivered: p.deliveredEvents,
          backlogStart: 0,
          backlogEnd: p.backlogAtEnd,
          // Read every 5 s through the hold: a consumer that cannot carry the rate shows here too.
          kafkaLagSamples: held.lagSamples,
          latencyP99Ms: arrivals.count > 0 ? arrivals.percentile(99) : undefined,
        },
        options.ramp.tolerance,
        options.ramp.maxP99Ms,
      );
      return { ...held, verdict };
    };

    // A 6 s ramp step can pass at a rate a 60 s hold cannot (the edge is probabilistic on a
    // shared machine): a hold judged not sustained — by the ramp's own rules over the whole
    // hold — is drained and tried again 10 % lower, at most MAX_HOLD_RETRIES times, so the
    // figure reported is a rate that held.
    let holdRate = sustainableRate;
    let holdTag = 'a';
    let max = await holdPhase(holdRate, holdTag);
    for (let retry = 1; !max.verdict.sustained && retry <= MAX_HOLD_RETRIES; retry++) {
      notes.push(`the hold at ${int(holdRate)}/s was not sustained (${max.verdict.reasons.join('; ')}); held again at ${int(roundRate(holdRate * 0.9))}/s`);
      holdRate = roundRate(holdRate * 0.9);
      holdTag = `a-retry-${retry}`;
      await drain(DRAIN_TIMEOUT_MS);
      max = await holdPhase(holdRate, holdTag);
    }
    say(`phase (b): ${int(options.steadyRate)}/s for ${options.steadySeconds} s`);
    const steady = await phase('steady', `(b) ${int(options.steadyRate)}/s`, 'b', options.steadyRate, options.steadySeconds);

    const finalDrain = await drain(FINAL_DRAIN_TIMEOUT_MS);
    if (!finalDrain.drained) notes.push(`the pipeline had not drained ${FINAL_DRAIN_TIMEOUT_MS / 1000} s after the last phase`);
    const finalLag = await kafkaLag(admin, topics, withIndexer);
    const runEndCpu = processes.snapshot();
    const runSeconds = (Date.now() - runStartAt) / 1000;

    // The fixed cost again, now that the JVMs have compiled their hot paths, as a broker that
    // has run for a while has: right after the warm-up the broker still spends a third of its
    // CPU in its JIT compiler threads (ANALYSIS.md, "where the broker's CPU goes").
    say(`idle after the run: ${IDLE_SETTLE_SECONDS} s to settle first`);
    await sleep(IDLE_SETTLE_SECONDS * 1000);
    const idleAfter = await measureIdle('idle after the run');
    generator.process.send({ kind: 'final' } satisfies GeneratorCommand);
    const generated: GeneratorFinal = await generator.next('final', 10_000);
    receiver.process.send({ kind: 'final' } satisfies ReceiverCommand);
    const received: ReceiverFinal = await receiver.next('final', 10_000);
    const loadAverageEnd = loadavg();

    say('stopping the services');
    const profiled = options.profile ? services.get(options.profile) : undefined;
    await stopAll();

    const accounting = reconcile(BitSet.fromBase64(generated.acceptedBatches), BitSet.fromBase64(received.delivered), BATCH_SIZE);
    const phaseResult = (p: (typeof max)['partial'], tag: string): PhaseResult => ({
      ...p,
      latency: summaryOf(received.phases[tag]),
      requestLatency: summaryOf(generated.phases[tag]?.requestLatency),
    });
    const maxResult = phaseResult(max.partial, holdTag);
    const steadyResult = phaseResult(steady.partial, 'b');
    for (const step of rampSteps) step.latency = summaryOf(received.phases[`ramp-${step.targetRate}`]);

    const kafkaJvm = jvms.find((j) => j.role === 'kafka');
    const machine = {
      cpuModel: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryBytes: totalmem(),
      kernel: release(),
      node: process.version,
      java: javaVersion(kafkaJvm?.pid),
      // The distribution's directory (kafka-3.9.1) or its jars (kafka_2.13-3.9.1.jar) name the version.
      kafka: /kafka(?:_[\d.]+)?-(\d+\.\d+\.\d+)/.exec(kafkaJvm?.cmdline ?? '')?.[1] ?? 'unknown',
      registry: `Apicurio Registry ${/apicurio-registry-app-(\d+\.\d+\.\d+)/.exec(jvms.find((j) => j.role === 'registry')?.cmdline ?? '')?.[1] ?? '(version unknown)'}`,
      loadAverageStart,
      loadAverageEnd,
    };

    const serviceUsage = (usage: ProcessUsage[]) => usage.filter((u) => (SERVICES as readonly string[]).includes(u.name));
    const heaviest = serviceUsage(maxResult.processes).sort((a, b) => b.cpuMsPer1kEvents - a.cpuMsPer1kEvents)[0];
    if (heaviest) {
      notes.push(
        `most CPU per delivered event among the services in (a): ${heaviest.name}, ${heaviest.cpuMsPer1kEvents.toFixed(0)} ms per 1,000 events, ${int(heaviest.corePercent)} % of one core`,
      );
    }
    if (Object.keys(options.settings).length > 0) notes.push(`services ran with${settingsNote(options.settings).slice(1)}`);
    if (options.logLevel !== 'info') notes.push(`services ran at LOG_LEVEL=${options.logLevel} (the services' default is info: a line per failed attempt, up to 10 per destination every 10 s, none per delivered one; see ANALYSIS.md)`);

    const result: BenchResult = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      durationSeconds: elapsed(),
      machine,
      settings: {
        namespace,
        stackProvider: `${stack.provider}${stack.startedHere ? ', started by the run' : ', reused'}`,
        partitions,
        batchSize: BATCH_SIZE,
        logLevel: options.logLevel,
        profiledService: options.profile,
        ramp: { ...options.ramp, stepSeconds: options.stepSeconds, measuredSeconds: options.measuredSeconds },
        holdSeconds: options.holdSeconds,
        steadyRate: options.steadyRate,
        steadySeconds: options.steadySeconds,
        serviceEnv: { ...serviceEnv, ADMIN_TOKEN: '(set)' },
      },
      limits: limits.limits,
      ramp: { steps: rampSteps, sustainableRate: holdRate, why: holdRate === sustainableRate ? action.why : `${action.why}; the hold at ${int(sustainableRate)}/s was not sustained` },
      phases: { max: maxResult, steady: steadyResult },
      idle,
      idleAfter,
      ratios: {
        deliveredVsHttpLimit: maxResult.deliveredRate / limits.limits.http.requestsPerSecond,
        deliveredVsKafkaLimit: maxResult.deliveredRate / limits.limits.kafka.endToEndPerSecond,
      },
      cpuBudget: cpuBudget([...DELIVERY_PATH, BROKER], 'indexer', { max: maxResult.processes, steady: steadyResult.processes, idle, idleAfter }),
      integrity: {
        acceptedEvents: accounting.acceptedMessages,
        deliveredOfAccepted: accounting.deliveredOfAccepted,
        lost: accounting.lost,
        lostSample: accounting.lostSample,
        duplicates: received.duplicates,
        deliveredUnacknowledged: accounting.deliveredUnacknowledged,
        foreignRequests: received.foreign,
        signatures: received.signatures,
        refusedByStatus: generated.refusedByStatus,
        kafkaLagAtEnd: finalLag,
      },
      processes: processes.usage(runStartCpu, runEndCpu, runSeconds, collector.counters.delivered),
      timeline: collector.timeline(),
      timelinePhases,
      notes,
    };

    if (profiled) {
      const found = await readProfileOf(profiled.process.pid);
      if (found) {
        const { file, profile } = found;
        result.profile = {
          service: profiled.name,
          file: file.slice(REPO_ROOT.length + 1),
          windowSeconds: [max.fromS, max.toS],
          ...windowedProfile(profile, [max.fromMicros, max.toMicros], 20),
        };
      } else notes.push(`no .cpuprofile of ${options.profile} (pid ${profiled.process.pid}) was found in ${PROFILE_DIR}`);
    }

    await writeResults(result, stamp, options.label);
    if (accounting.lost > 0) {
      process.exitCode = 1;
      say(`LOST ${accounting.lost} accepted messages (e.g. seq ${accounting.lostSample.join(', ')})`);
    }
  } finally {
    await stopAll().catch(() => undefined);
    if (!options.keepTopics) await deleteNamespace(admin, namespace).catch((error: unknown) => say(`could not delete the run's topics: ${String(error)}`));
    await admin.disconnect();
    await stack.stop();
  }
}

async function measureLimits(
  options: BenchOptions,
  brokers: string[],
  topics: TopicNames,
  partitions: number,
  body: string,
  signature: string,
  receiverPort: number,
  admin: Admin,
  processes: ProcessTable,
): Promise<{ limits: Limits; fromS: number; toS: number }> {
  const fromS = elapsed();
  const only = (usage: ProcessUsage[], names: string[]) => usage.filter((u) => names.includes(u.name));

  say(`limit 1: undici POSTs from one process to the receiver, ${HTTP_LIMIT_CONNECTIONS} connections, ${options.limitSeconds} s`);
  const httpProbe = forkChild<HttpLimitResult>('limit-http.js', {
    BENCH_LIMIT_URL: `http://127.0.0.1:${receiverPort}/limit`,
    BENCH_LIMIT_BODY: body,
    BENCH_LIMIT_SIGNATURE: signature,
    BENCH_LIMIT_SECONDS: String(options.limitSeconds),
    BENCH_LIMIT_CONNECTIONS: String(HTTP_LIMIT_CONNECTIONS),
  });
  const httpTable = new ProcessTable();
  httpTable.add('HTTP limit probe', httpProbe.process.pid);
  const httpCpuStart = new Map([...processes.snapshot(), ...httpTable.snapshot()]);
  const http = await httpProbe.next('http-limit', (options.limitSeconds + 30) * 1000);
  const httpCpuEnd = new Map([...processes.snapshot(), ...httpTable.snapshot()]);
  await stopChild(httpProbe.process);
  const httpSeconds = options.limitSeconds + 2;
  const httpUsage = processes.usage(httpCpuStart, httpCpuEnd, httpSeconds, http.requests).concat(httpTable.usage(httpCpuStart, httpCpuEnd, httpSeconds, http.requests));
  say(`limit 1: ${int(http.requestsPerSecond)} requests/s, p99 ${ms(LatencyHistogram.fromJSON(http.latency).percentile(99))} ms, ${http.errors} errors`);

  const topic = `${topics.namespace}.bench-limit.v1`;
  await ensureTopics(admin, [{ topic, numPartitions: partitions }]);
  say(`limit 2: kafkajs produce → consume on ${topic}, batches of 100 × ${KAFKA_LIMIT_RECORD_BYTES} B, acks=all, ${options.limitSeconds} s`);
  const kafkaEnv = {
    BENCH_KAFKA_BROKERS: brokers.join(','),
    BENCH_LIMIT_TOPIC: topic,
    BENCH_LIMIT_RECORD_BYTES: String(KAFKA_LIMIT_RECORD_BYTES),
    BENCH_LIMIT_SECONDS: String(options.limitSeconds),
  };
  let consumedSoFar = 0;
  const consumer = forkChild<KafkaLimitResult | KafkaLimitReady | KafkaLimitProgress>('limit-kafka.js', { ...kafkaEnv, BENCH_KAFKA_ROLE: 'consume' }, (report) => {
    if (report.kind === 'kafka-limit-progress') consumedSoFar = report.records;
  });
  await consumer.next('kafka-limit-ready', 60_000);
  const producer = forkChild<KafkaLimitResult | KafkaLimitReady | KafkaLimitProgress>('limit-kafka.js', { ...kafkaEnv, BENCH_KAFKA_ROLE: 'produce' });
  const kafkaTable = new ProcessTable();
  kafkaTable.add('Kafka limit consumer', consumer.process.pid);
  kafkaTable.add('Kafka limit producer', producer.process.pid);
  const kafkaCpuStart = new Map([...processes.snapshot(), ...kafkaTable.snapshot()]);
  const produced = await producer.next('kafka-limit', (options.limitSeconds + 60) * 1000);
  // Let the consumer read what is left, or until it stops making progress.
  for (let previous = -1; consumedSoFar < produced.records && consumedSoFar !== previous; ) {
    previous = consumedSoFar;
    await sleep(1000);
  }
  const kafkaCpuEnd = new Map([...processes.snapshot(), ...kafkaTable.snapshot()]);
  consumer.process.send('stop');
  const consumed = (await consumer.next('kafka-limit', 30_000)) as KafkaLimitResult;
  producer.process.send('stop');
  const kafkaSeconds = (consumed.lastMs - produced.firstMs) / 1000;
  const endToEnd = consumed.records / kafkaSeconds;
  const kafkaUsage = processes
    .usage(kafkaCpuStart, kafkaCpuEnd, kafkaSeconds, consumed.records)
    .concat(kafkaTable.usage(kafkaCpuStart, kafkaCpuEnd, kafkaSeconds, consumed.records));
  say(
    `limit 2: produced ${int(produced.records)} (${int(produced.records / ((produced.lastMs - produced.firstMs) / 1000))}/s), ` +
      `consumed ${int(consumed.records)}: ${int(endToEnd)} records/s end to end`,
  );
  await Promise.all([stopChild(consumer.process), stopChild(producer.process)]);

  return {
    fromS,
    toS: elapsed(),
    limits: {
      http: {
        connections: HTTP_LIMIT_CONNECTIONS,
        seconds: http.seconds,
        requestsPerSecond: http.requestsPerSecond,
        errors: http.errors,
        latency: summaryOf(http.latency),
        bodyBytes: Buffer.byteLength(body),
        processes: only(httpUsage, [RECEIVER, 'HTTP limit probe']),
      },
      kafka: {
        partitions,
        recordBytes: KAFKA_LIMIT_RECORD_BYTES,
        seconds: kafkaSeconds,
        produced: produced.records,
        consumed: consumed.records,
        producedPerSecond: produced.records / ((produced.lastMs - produced.firstMs) / 1000),
        endToEndPerSecond: endToEnd,
        processes: only(kafkaUsage, [BROKER, 'Kafka limit producer', 'Kafka limit consumer']),
      },
    },
  };
}

async function writeResults(result: BenchResult, stamp: string, label: string | undefined): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const base = label ? `${stamp}-${label}` : stamp;
  const chart = renderChart({
    title: `Tributary end to end, ${result.startedAt.slice(0, 16).replace('T', ' ')} UTC: ${result.machine.cores} cores, (a) ${int(result.phases.max.offeredRate)}/s, (b) ${int(result.phases.steady.offeredRate)}/s`,
    points: result.timeline,
    phases: result.timelinePhases,
  });
  await writeFile(join(RESULTS_DIR, `${base}.json`), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(RESULTS_DIR, `${base}.svg`), chart);
  const markdown = renderMarkdown(result, `${base}.svg`);
  await writeFile(join(RESULTS_DIR, `${base}.md`), markdown);
  await copyFile(join(RESULTS_DIR, `${base}.json`), join(RESULTS_DIR, 'latest.json'));
  await copyFile(join(RESULTS_DIR, `${base}.svg`), join(RESULTS_DIR, 'latest.svg'));
  await writeFile(join(RESULTS_DIR, 'latest.md'), renderMarkdown(result, 'latest.svg'));
  process.stdout.write(`\n${markdown}\n`);
  say(`results: test/bench/results/${base}.{json,md,svg} (and latest.*)`);
}

if (process.argv.includes('--help')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
let run: () => Promise<void>;
try {
  const argv = process.argv.slice(2);
  const scenario = scenarioOf(argv);
  if (scenario === 'noisy-neighbour') {
    const noisy = parseNoisyOptions(argv);
    run = () => runNoisyNeighbour(noisy);
  } else if (scenario === 'audience-sync') {
    const audience = parseAudienceOptions(argv);
    run = () => runAudienceBench(audience);
  } else {
    const options: BenchOptions = parseOptions(argv);
    run = () => main(options);
  }
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
try {
  await run();
  // Explicitly: a child's pending report timer must not keep the run alive.
  process.exit(process.exitCode ?? 0);
} catch (error) {
  say(`the benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
}
