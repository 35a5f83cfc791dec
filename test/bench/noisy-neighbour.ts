/**
 * `npm run bench -- --scenario=noisy-neighbour`: does a burst to failing destinations hold
 * back a healthy one?
 *
 * A healthy destination on its own source gets a steady trickle (one event per request, as
 * an app sends them) for the whole run. After a baseline, each of three failing destinations
 * — connection refused, a fast 503, a receiver that never answers (past the 5 s window) —
 * gets a burst of `--burst-events` (100,000) on a source of its own, one after the other,
 * while the trickle goes on. The retry window is cut short (`--ladder`, `--window`: the
 * production ladder's first tiers, 10s,1m, within 3 min) so that every failing delivery goes
 * all the way through the ladder to its `expired` dead letter within the run.
 *
 * Before them, a control burst of the same size and rate goes to a destination that answers
 * 200 at once: what the same load costs the trickle when nothing fails. On a machine the
 * bursts saturate, the trickle waits for CPU whatever the burst's destination does; the
 * control tells that apart from waiting behind the failing destinations.
 *
 * Reported: the healthy destination's delivery latency during each burst against the
 * baseline and the control; how many of the burst's deliveries cost an HTTP request and how many were
 * deferred without one; the CPU each process spent per failing delivery; and, from the
 * dead-letter and attempt-log topics, that every failing delivery ended as one `expired`
 * dead letter and that no attempt was made after its window.
 *
 * `--slow-ms=N` adds a fourth burst, to a receiver that answers 200 after N ms (within the
 * window): slow, not failing. Its deliveries end delivered or, what the ladder could not carry
 * to it within the cut-short window, `expired`; every one of them ends once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Admin, Kafka } from 'kafkajs';
import { acquireStack } from '@tributary/deploy/acquire';
import { topicNames, type DeadLetter, type DeliveryAttempt, type TopicNames } from '@tributary/schemas';
import { AvroCodec, createConsumer, createKafka, createLogger, parseDuration } from '@tributary/shared';
import { metricValue } from '../harness/metrics.js';
import { REPO_ROOT, startService, type RunningService } from '../harness/services.js';
import { reconcile } from './accounting.js';
import { adminCaller, benchServiceEnv, deleteNamespace, SHARED_SECRET } from './pipeline.js';
import { BitSet } from './bitset.js';
import { forkChild, ProcessTable, stopChild, stopOnSignal, type Child } from './children.js';
import { LatencyHistogram, type LatencySummary } from './histogram.js';
import { SERVICES, settingsNote, type BenchService } from './options.js';
import { findStackJvms, hostStealSeconds, jitSecondsBetween } from './proc.js';
import type { FailingReceiverReport, GeneratorCommand, GeneratorFinal, GeneratorReport, ReceiverCommand, ReceiverFinal, ReceiverReport } from './protocol.js';
import { deliveryPathBacklog, indexerLag, maxBacklog, pathBacklog, SETTLED_LAG_RECORDS, waitUntilAtMost, type PathBacklog } from './kafka-lag.js';
import type { ProfileSummary } from './cpu-profile.js';
import { monotonicMicros, PROFILE_DIR, profilingArgs, readProfileOf, windowedProfile } from './profile-files.js';
import { int, ms, profileMarkdown } from './report.js';
import { cpuInterval, slowestCell, slowestSeconds, type CpuInterval, type SecondWindow, type SlowSecond } from './slowest-seconds.js';
import type { ProcessUsage } from './result.js';
import { WARM_WINDOW_SECONDS, warmupVerdict, type JitSample } from './warm-up.js';

export interface NoisyOptions {
  burstEvents: number;
  burstRate: number;
  trickleRate: number;
  baselineSeconds: number;
  /** Load at the burst rate through the control destination before the baseline: at least this long… */
  warmupSeconds: number;
  /** …and longer, up to this, while the broker's JIT compilers are still busy (warm-up.ts). */
  warmupMaxSeconds: number;
  /**
   * > 0: at the warm-up's start, this many events at the burst rate to a destination that
   * answers 503, and the warm-up lasts until their ladder has ended — so that the paths only a
   * failing destination takes (deferral, the tiers' first releases) are compiled before
   * anything is measured, as the healthy ones are.
   */
  warmupFailingEvents: number;
  /** How long the trickle goes on after each burst before the next, still counted to it. */
  tailSeconds: number;
  /** > 0: a burst to a receiver that answers 200 after this long, after the failing ones. */
  slowMs: number;
  ladder: string;
  window: string;
  logLevel: string;
  partitions: number | undefined;
  label: string | undefined;
  keepTopics: boolean;
  /** Start this service with --cpu-prof and summarise its profile over each burst phase. */
  profile: BenchService | undefined;
  /** Extra settings for every service (`--set KEY=VALUE`). */
  settings: Record<string, string>;
}

/** The control burst comes first; the failing ones after it. */
export const CONTROL = { name: 'control', title: 'a healthy destination (control)', destinationId: 'control' } as const;
export const VARIANTS = [
  { name: 'refused', title: 'connection refused', destinationId: 'refused' },
  { name: 'fast-503', title: 'fast 503', destinationId: 'fast-503' },
  { name: 'hanging', title: 'hanging past the 5 s timeout', destinationId: 'hanging' },
  { name: 'slow', title: 'slow: answers 200 after --slow-ms', destinationId: 'slow' },
] as const;
type Variant = (typeof VARIANTS)[number] | typeof CONTROL;
/** The variants a run has: the slow one only with --slow-ms. */
const variantsOf = (options: NoisyOptions): ReadonlyArray<(typeof VARIANTS)[number]> => VARIANTS.filter((variant) => variant.name !== 'slow' || options.slowMs > 0);
const titleOf = (variant: Variant, options: NoisyOptions): string => (variant.name === 'slow' ? `slow: answers 200 after ${options.slowMs} ms` : variant.title);

export interface VariantResult {
  variant: string;
  title: string;
  burstSeconds: number;
  burstEvents: number;
  /** The healthy destination's delivery latency while this burst ran and for the tail after it. */
  healthyLatency: LatencySummary;
  /** Webhook requests made to the failing destination, over the whole run (attempt log). */
  requests: number;
  /** Its deliveries deferred without a request, over the whole run (attempt log). */
  deferrals: { circuitOpen: number; backlogFull: number };
  /** Deferrals of any failing destination during this phase (dispatcher metrics). */
  phaseDeferrals: number;
  /** New deliveries the router deferred onto the ladder during this phase (circuit open at every dispatcher). */
  routerDeferrals: number;
  /** Due records the retry-scheduler deferred again during this phase, rather than released (the same). */
  schedulerDeferrals: number;
  /** CPU per process over the phase, per failing delivery (`cpuMsPer1kEvents` = µs per delivery). */
  processes: ProcessUsage[];
  /** Dispatcher CPU per deferral over the phase, µs. */
  dispatcherMicrosPerDeferral: number;
  /** All services and the broker, per burst event, µs. */
  pipelineMicrosPerEvent: number;
  /**
   * The machine's steal time over the phase, CPU s (/proc/stat; undefined where unreported):
   * time a virtual machine's CPUs waited for the hypervisor. With ingest's CPU per event — the
   * same work in every phase — it tells a slower host from a costlier phase (runs since the
   * night of 28 November 2026).
   */
  hostStealSeconds?: number;
  /** The largest backlog at each step of the delivery path, sampled every second of the phase (runs since 26 November 2026). */
  peakBacklog?: PathBacklog;
  /** The seconds of arrivals at the healthy receiver with the slowest deliveries, in the phase (runs since the evening of 26 November 2026). */
  slowestSeconds?: SlowSecond[];
  /** `--profile`: where the profiled service's main thread spent the phase (the window in µs since the profile's start). */
  profile?: { windowMicros: [number, number]; summary: ProfileSummary };
}

export interface NoisyResult {
  scenario: 'noisy-neighbour';
  startedAt: string;
  durationSeconds: number;
  machine: { cores: number; cpuModel: string; loadAverageStart: number[]; loadAverageEnd: number[] };
  settings: Omit<NoisyOptions, 'label' | 'keepTopics' | 'profile'> & { namespace: string; partitions: number; profiledService?: BenchService };
  /** How long the warm-up load ran, and why it ended (runs since the afternoon of 27 November 2026). */
  warmup?: {
    seconds: number;
    ended: 'warm' | 'limit' | 'no broker';
    brokerJitCoreShare: number | undefined;
    /** Events of the warm-up's failing burst (runs since the night of 28 November 2026). */
    failingEvents?: number;
  };
  baseline: { seconds: number; latency: LatencySummary; slowestSeconds?: SlowSecond[] };
  /** The same burst to a destination that answers 200 at once. */
  control: VariantResult;
  variants: VariantResult[];
  after: { latency: LatencySummary };
  healthy: { accepted: number; lost: number; duplicates: number; signatures: ReceiverFinal['signatures'] };
  ladder: {
    /** Per failing destination: deliveries accepted, `expired` dead letters, other dead letters, attempts after the window. */
    perDestination: Array<{
      destinationId: string;
      deliveries: number;
      /** Delivered with a 200 (attempt log): the slow receiver's, 0 for the failing ones. */
      delivered?: number;
      expired: number;
      otherDeadLetters: number;
      attemptsAfterWindow: number;
      /** Attempt-log records (attempts and deferrals) per delivery: the steps it took up the ladder. */
      meanSteps: number;
      /** Requests made, from the attempt log, and as the receiver counted them. */
      requests: number;
      requestsReceived: number | null;
    }>;
    allExpired: boolean;
    waitedSeconds: number;
  };
  verdict: {
    p99WithinOneSecond: boolean;
    p99WithinTwiceBaseline: boolean;
    /** The worst failing burst's trickle p99 ÷ the control burst's. */
    p99VersusControl: number;
    noneAttemptedAfterWindow: boolean;
    everyFailingDeliveryExpired: boolean;
    healthyLost: number;
  };
  notes: string[];
}

const RESULTS_DIR = join(REPO_ROOT, 'test', 'bench', 'results');
/** A delivery path this close to empty counts as drained (the trickle and in-flight work). */
const DRAINED_RECORDS = 200;
const DRAIN_LIMIT_MS = 240_000;
const BROKER = 'Kafka broker (JVM)';
const WARMUP_SOURCE = 'noisy-warmup';
/** The source and destination of the warm-up's failing burst (--warmup-failing-events). */
const WARMUP_FAILING = 'noisy-warmup-failing';
const REGISTRY = 'schema registry (JVM)';

const t0 = Date.now();
const elapsed = () => (Date.now() - t0) / 1000;
const say = (line: string): void => void process.stdout.write(`[${elapsed().toFixed(0).padStart(4)} s] ${line}\n`);
const sleep = (msToWait: number) => new Promise((resolve) => setTimeout(resolve, msToWait));

export async function runNoisyNeighbour(options: NoisyOptions): Promise<void> {
  const startedAt = new Date(t0);
  const loadAverageStart = loadavg();
  const stack = await acquireStack({ log: (line) => say(`stack: ${line}`) });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
  const namespace = `noisy-${stamp.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  const topics = topicNames(namespace);
  const logger = createLogger({ service: 'bench', level: 'warn' });
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'tributary-bench-noisy', logger });
  const admin = kafka.admin();
  await admin.connect();
  const processes = new ProcessTable();
  for (const jvm of findStackJvms()) processes.add(jvm.role === 'kafka' ? BROKER : REGISTRY, jvm.pid);
  const notes: string[] = [];

  const services = new Map<BenchService, RunningService>();
  const children: Array<Child<{ kind: string }>> = [];
  const stopAll = async () => {
    for (const child of children.reverse()) await stopChild(child.process);
    await Promise.all([...services.values()].reverse().map((service) => service.stop()));
  };
  stopOnSignal(say, stopAll);
  try {
    const receiver = forkChild<ReceiverReport>('receiver.js', { BENCH_SHARED_SECRET: SHARED_SECRET });
    children.push(receiver);
    const { port: receiverPort } = await receiver.next('listening', 10_000);
    const trickleSeconds: SecondWindow[] = [];
    receiver.process.on('message', (report: ReceiverReport) => {
      if (report.kind === 'window') trickleSeconds.push({ fromMs: report.fromMs, toMs: report.toMs, latency: report.latency });
    });
    processes.add('webhook receiver (healthy)', receiver.process.pid);
    const failing = forkChild<FailingReceiverReport>('failing-receiver.js', { BENCH_SLOW_MS: String(options.slowMs || 3_000) });
    children.push(failing);
    const { port: failingPort } = await failing.next('listening', 10_000);
    processes.add('webhook receiver (failing)', failing.process.pid);
    const refusedPort = await closedPort();

    const serviceEnv = benchServiceEnv(stack, namespace, options, { RETRY_LADDER: options.ladder, RETRY_WINDOW: options.window, ...options.settings });
    say(`starting ${SERVICES.join(', ')} in namespace ${namespace} (ladder ${options.ladder} within ${options.window}${options.profile ? `, ${options.profile} under --cpu-prof` : ''})`);
    await mkdir(PROFILE_DIR, { recursive: true });
    for (const name of SERVICES) {
      const nodeArgs = options.profile === name ? profilingArgs() : [];
      services.set(name, await startService(name, { env: serviceEnv, nodeArgs, readyTimeoutMs: 90_000 }));
      processes.add(name, services.get(name)!.process.pid);
    }
    const ingest = services.get('ingest')!;
    const dispatcher = services.get('dispatcher')!;
    const router = services.get('router')!;
    const scheduler = services.get('retry-scheduler')!;
    const adminCall = adminCaller(ingest.url);
    const urls: Record<Variant['name'], string> = {
      control: `http://127.0.0.1:${failingPort}/ok`,
      refused: `http://127.0.0.1:${refusedPort}/hooks`,
      'fast-503': `http://127.0.0.1:${failingPort}/fail`,
      hanging: `http://127.0.0.1:${failingPort}/hang`,
      slow: `http://127.0.0.1:${failingPort}/slow`,
    };
    const VARIANTS_RUN = variantsOf(options);
    const BURSTS: readonly Variant[] = [CONTROL, ...VARIANTS_RUN];
    await adminCall('PUT', '/sources/quiet', { name: 'Quiet app', writeKey: `wk_quiet_${namespace}` });
    await adminCall('PUT', '/destinations/healthy', {
      type: 'webhooks',
      sources: ['quiet'],
      settings: { sharedSecret: SHARED_SECRET, webhooks: [{ url: `http://127.0.0.1:${receiverPort}/hooks` }] },
    });
    // The warm-up has a source of its own: its messageIds are the control burst's (each
    // generator counts from 0), and from the same source the router would drop the control
    // burst's as duplicates of the warm-up's — a control phase that delivered nothing.
    await adminCall('PUT', `/sources/${WARMUP_SOURCE}`, { name: 'Warm-up', writeKey: `wk_warmup_${namespace}` });
    if (options.warmupFailingEvents > 0) {
      await adminCall('PUT', `/sources/${WARMUP_FAILING}`, { name: 'Warm-up (failing)', writeKey: `wk_warmupfailing_${namespace}` });
      await adminCall('PUT', `/destinations/${WARMUP_FAILING}`, { type: 'webhooks', sources: [WARMUP_FAILING], settings: { webhooks: [{ url: `http://127.0.0.1:${failingPort}/warmup-fail` }] } });
    }
    for (const variant of BURSTS) {
      const sources = [`noisy-${variant.name}`, ...(variant === CONTROL ? [WARMUP_SOURCE] : [])];
      await adminCall('PUT', `/sources/noisy-${variant.name}`, { name: `Noisy (${titleOf(variant, options)})`, writeKey: `wk_${variant.name}_${namespace}` });
      await adminCall('PUT', `/destinations/${variant.destinationId}`, { type: 'webhooks', sources, settings: { webhooks: [{ url: urls[variant.name] }] } });
    }
    await sleep(2000);
    const partitions = (await admin.fetchTopicMetadata({ topics: [topics.ingest] })).topics[0]?.partitions.length ?? 0;

    // The trickle: one event per request to the quiet source, for the whole run.
    const trickle = forkChild<GeneratorReport>('load-generator.js', { BENCH_INGEST_URL: ingest.url, BENCH_WRITE_KEY: `wk_quiet_${namespace}`, BENCH_BATCH_SIZE: '1' });
    children.push(trickle);
    processes.add('load generator (trickle)', trickle.process.pid);
    // Each phase starts on an empty delivery path: a burst offered faster than the pipeline
    // delivers (a healthy one above all) leaves a backlog, and the next phase would otherwise
    // measure what that one left rather than its own effect. The wait is reported.
    const waitBelow = async (before: string, what: string, limit: number, measure: () => Promise<number>): Promise<void> => {
      const { waitedMs, last: waiting } = await waitUntilAtMost(measure, limit, DRAIN_LIMIT_MS);
      const waited = waitedMs / 1000;
      if (waited >= 1 || waiting > limit) {
        const note = `waited ${waited.toFixed(0)} s before ${before} for ${what}${waiting > limit ? `; ${int(waiting)} records were still waiting` : ''}`;
        notes.push(note);
        say(`  ${note}`);
      }
    };
    const drained = (before: string) =>
      waitBelow(before, "the delivery path's backlog (router lanes, dispatcher first attempts) to clear", DRAINED_RECORDS, () => deliveryPathBacklog(admin, topics));
    // The baseline is the pipeline at rest but for the trickle: the delivery log's indexer, which
    // trails delivery, still writing the warm-up's records would measure its CPU, not the rest
    // (a baseline p99 of 350 ms against 83 ms after the bursts, in a run at 4,000/s).
    const indexerCaughtUp = (before: string) => waitBelow(before, 'the indexer to catch up', SETTLED_LAG_RECORDS, () => indexerLag(admin, topics));
    const trickleAt = (phase: string) => {
      trickle.process.send({ kind: 'rate', rate: options.trickleRate, phase } satisfies GeneratorCommand);
    };
    // Warm-up: the burst's rate through the control destination, so that the JIT compilers of
    // the services and the broker have seen the hot paths before anything is measured (a
    // freshly started broker measured a baseline p99 five times its warm one), and for as long
    // as the broker still compiles them (warm-up.ts).
    // The warm-up's failing burst (--warmup-failing-events) climbs the ladder for the whole
    // window: the warm-up lasts until it has ended, so that none of it moves during the baseline.
    const failingSeconds = options.warmupFailingEvents / options.burstRate;
    const failingAtLeast = options.warmupFailingEvents > 0 ? Math.ceil(failingSeconds + parseDuration(options.window) / 1000 + 30) : 0;
    const warmupOptions = { ...options, warmupSeconds: Math.max(options.warmupSeconds, failingAtLeast), warmupMaxSeconds: Math.max(options.warmupMaxSeconds, failingAtLeast) };
    say(`warm-up: ${int(options.burstRate)}/s to the control destination for ${warmupOptions.warmupSeconds}–${warmupOptions.warmupMaxSeconds} s, until the broker's compilers are quiet; then 10 s of the trickle alone`);
    trickleAt('warmup');
    const warmup = forkChild<GeneratorReport>('load-generator.js', { BENCH_INGEST_URL: ingest.url, BENCH_WRITE_KEY: `wk_warmup_${namespace}` });
    children.push(warmup);
    warmup.process.send({ kind: 'rate', rate: options.burstRate, phase: 'warmup' } satisfies GeneratorCommand);
    let warmupFailing: Promise<void> = Promise.resolve();
    if (options.warmupFailingEvents > 0) {
      say(`  and ${int(options.warmupFailingEvents)} events at ${int(options.burstRate)}/s to a destination answering 503, the warm-up lasting at least ${failingAtLeast} s for their ladder to end`);
      const failingGenerator = forkChild<GeneratorReport>('load-generator.js', { BENCH_INGEST_URL: ingest.url, BENCH_WRITE_KEY: `wk_warmupfailing_${namespace}` });
      children.push(failingGenerator);
      failingGenerator.process.send({ kind: 'rate', rate: options.burstRate, phase: 'warmup-failing' } satisfies GeneratorCommand);
      warmupFailing = (async () => {
        await sleep(failingSeconds * 1000);
        failingGenerator.process.send({ kind: 'rate', rate: 0, phase: 'warmup-failing' } satisfies GeneratorCommand);
        await stopChild(failingGenerator.process);
      })();
    }
    const warmedUp = { ...(await warmUp(processes, warmupOptions)), failingEvents: options.warmupFailingEvents };
    await warmupFailing;
    warmup.process.send({ kind: 'rate', rate: 0, phase: 'warmup' } satisfies GeneratorCommand);
    say(
      `  warm-up ended after ${warmedUp.seconds.toFixed(0)} s: ` +
        (warmedUp.ended === 'no broker'
          ? 'no broker process to watch on this machine'
          : `the broker's compilers at ${percent(warmedUp.brokerJitCoreShare)} of a core over the last ${WARM_WINDOW_SECONDS} s${warmedUp.ended === 'limit' ? ' (the maximum came first)' : ''}`),
    );
    if (warmedUp.ended === 'limit') notes.push(`the warm-up reached its maximum (${warmupOptions.warmupMaxSeconds} s) with the broker's compilers still at ${percent(warmedUp.brokerJitCoreShare)} of a core`);
    await sleep(10_000);
    await stopChild(warmup.process);
    await drained('the baseline');
    await indexerCaughtUp('the baseline');
    say(`baseline: the healthy destination alone, ${options.trickleRate} events/s for ${options.baselineSeconds} s`);
    trickleAt('baseline');
    const baselineFrom = Date.now();
    await sleep(options.baselineSeconds * 1000);
    const baselineTo = Date.now();

    const phaseCpu: Array<{
      variant: Variant;
      start: ReturnType<ProcessTable['snapshot']>;
      end: ReturnType<ProcessTable['snapshot']>;
      seconds: number;
      burstSeconds: number;
      startedPhase: number;
      /** The phase on the monotonic clock a profile's samples carry. */
      micros: [number, number];
      accepted: number;
      counters: PhaseCounters;
      peak: PathBacklog;
      cpu: CpuInterval[];
      steal: number | undefined;
    }> = [];
    const burstAccepted = new Map<string, number>();
    for (const variant of BURSTS) {
      await drained(`the burst to ${titleOf(variant, options)}`);
      trickleAt(`during-${variant.name}`);
      const generator = forkChild<GeneratorReport>('load-generator.js', { BENCH_INGEST_URL: ingest.url, BENCH_WRITE_KEY: `wk_${variant.name}_${namespace}` });
      children.push(generator);
      let sent = 0;
      generator.process.on('message', (report: GeneratorReport) => {
        if (report.kind === 'window') sent += report.sent;
      });
      const before = await phaseCounters(dispatcher.url, router.url, scheduler.url);
      const start = processes.snapshot();
      const startedPhase = Date.now();
      const stealFrom = hostStealSeconds();
      const fromMicros = monotonicMicros();
      say(`burst to ${titleOf(variant, options)}: ${int(options.burstEvents)} events at ${int(options.burstRate)}/s, the trickle going on`);
      generator.process.send({ kind: 'rate', rate: options.burstRate, phase: `burst-${variant.name}` } satisfies GeneratorCommand);
      // The largest backlog at each step, and each process's CPU, sampled every second through
      // the burst and its tail (the CPU to say who was busy when the trickle was slowest).
      let peak: PathBacklog = { routerMain: 0, routerOverflow: 0, dispatcherFirst: 0 };
      const cpu: CpuInterval[] = [];
      let sampling = true;
      const sampler = (async () => {
        let previous = { at: Date.now(), sample: processes.snapshot() };
        while (sampling) {
          peak = maxBacklog(peak, await pathBacklog(admin, topics).catch(() => peak));
          await sleep(1000);
          const current = { at: Date.now(), sample: processes.snapshot() };
          cpu.push(cpuInterval(previous, current));
          previous = current;
        }
      })();
      while (sent < options.burstEvents) {
        await sleep(250);
        generator.process.send({ kind: 'flush' } satisfies GeneratorCommand);
      }
      generator.process.send({ kind: 'rate', rate: 0, phase: `burst-${variant.name}` } satisfies GeneratorCommand);
      const burstSeconds = (Date.now() - startedPhase) / 1000;
      await sleep(options.tailSeconds * 1000);
      generator.process.send({ kind: 'final' } satisfies GeneratorCommand);
      const final = (await generator.next('final', 30_000)) as GeneratorFinal;
      const acceptedEvents = BitSet.fromBase64(final.acceptedBatches).size * 100;
      sampling = false;
      await sampler;
      const end = processes.snapshot();
      const stealTo = hostStealSeconds();
      const toMicros = monotonicMicros();
      const counters = difference(await phaseCounters(dispatcher.url, router.url, scheduler.url), before);
      const seconds = (Date.now() - startedPhase) / 1000;
      burstAccepted.set(variant.destinationId, acceptedEvents);
      const steal = stealFrom === undefined || stealTo === undefined ? undefined : stealTo - stealFrom;
      phaseCpu.push({ variant, start, end, seconds, burstSeconds, startedPhase, micros: [fromMicros, toMicros], accepted: acceptedEvents, counters, peak, cpu, steal });
      await stopChild(generator.process);
      say(`  ${titleOf(variant, options)}: ${int(acceptedEvents)} accepted in ${burstSeconds.toFixed(0)} s; ${int(counters.circuitOpen)} deferred (circuit open), ${int(counters.backlogFull)} (backlog full) by the dispatcher, ${int(counters.router)} by the router, ${int(counters.scheduler)} by the retry-scheduler`);
      say(`  largest backlog: router main lane ${int(peak.routerMain)}, overflow lane ${int(peak.routerOverflow)}, dispatcher first attempts ${int(peak.dispatcherFirst)}`);
      // Every event of the bench has an id of its own: a repeat means the phase measured less than it says.
      if (counters.duplicates > 0) {
        const note = `the router dropped ${int(counters.duplicates)} messages as duplicates during the burst to ${titleOf(variant, options)}: that phase carried less load than it says`;
        notes.push(note);
        say(`  ${note}`);
      }
    }
    trickleAt('after');
    await sleep(20_000);
    trickle.process.send({ kind: 'rate', rate: 0, phase: 'after' } satisfies GeneratorCommand);

    // Every failing delivery climbs the ladder to its `expired` dead letter within the window;
    // every slow one ends delivered or expired.
    const windowMs = parseDuration(options.window);
    say(`waiting for every failing delivery's dead letter (window ${options.window})`);
    const codec = new AvroCodec({ registryUrl: stack.registryUrl, logger });
    const waitFrom = Date.now();
    let deadLetters = new Map<string, DeadLetter[]>();
    const ended = async (destinationId: string): Promise<number> =>
      (deadLetters.get(destinationId)?.length ?? 0) + (destinationId === 'slow' ? (await counts(failing)).slowAnswered : 0);
    for (;;) {
      deadLetters = await readDeadLetters(kafka, admin, codec, topics);
      const endedSoFar = await Promise.all(VARIANTS_RUN.map(async ({ destinationId }) => [destinationId, await ended(destinationId)] as const));
      const done = endedSoFar.every(([destinationId, count]) => count >= (burstAccepted.get(destinationId) ?? 0));
      if (done || Date.now() - waitFrom > windowMs * 3 + 120_000) break;
      say(`  ended so far: ${endedSoFar.map(([destinationId, count]) => `${destinationId} ${int(count)}`).join(', ')}`);
      await sleep(10_000);
    }
    const waitedSeconds = (Date.now() - waitFrom) / 1000;
    const firstAttemptAt = new Map<string, number>();
    for (const letters of deadLetters.values()) for (const letter of letters) firstAttemptAt.set(letter.delivery.deliveryId, letter.delivery.firstAttemptAt ?? Number.NaN);
    // Streamed: a run writes a million attempt-log records or more.
    const log = new Map<string, AttemptLogCounts>();
    await readWhole(kafka, admin, topics.attempts, (value) => codec.decode<DeliveryAttempt>('attempt', value), (attempt) => {
      let entry = log.get(attempt.destinationId);
      if (!entry) log.set(attempt.destinationId, (entry = { records: 0, requests: 0, delivered: 0, circuitOpen: 0, backlogFull: 0, afterWindow: 0 }));
      entry.records++;
      if (attempt.kind === 'attempt') {
        entry.requests++;
        if (attempt.outcome === 'delivered') entry.delivered++;
        if (attempt.startedAt > (firstAttemptAt.get(attempt.deliveryId) ?? Number.POSITIVE_INFINITY) + windowMs) entry.afterWindow++;
      } else if (attempt.deferReason === 'circuit_open') entry.circuitOpen++;
      else if (attempt.deferReason === 'backlog_full') entry.backlogFull++;
    });

    trickle.process.send({ kind: 'final' } satisfies GeneratorCommand);
    const trickleFinal = (await trickle.next('final', 10_000)) as GeneratorFinal;
    receiver.process.send({ kind: 'final' } satisfies ReceiverCommand);
    const received = (await receiver.next('final', 10_000)) as ReceiverFinal;
    const failingCounts = await counts(failing);
    await stopAll();
    const profiled = options.profile ? await readProfileOf(services.get(options.profile)?.process.pid) : undefined;
    if (options.profile && !profiled) notes.push(`no .cpuprofile of ${options.profile} was found in ${PROFILE_DIR}`);
    const logOf = (destinationId: string): AttemptLogCounts => log.get(destinationId) ?? { records: 0, requests: 0, delivered: 0, circuitOpen: 0, backlogFull: 0, afterWindow: 0 };

    const latency = (tag: string) => LatencyHistogram.fromJSON(received.phases[tag] ?? new LatencyHistogram().toJSON()).summary();
    const baseline = latency('baseline');
    const bursts: VariantResult[] = phaseCpu.map(({ variant, start, end, seconds, burstSeconds, startedPhase, micros, accepted, counters, peak, cpu, steal }) => {
      const usage = processes.usage(start, end, seconds, accepted);
      const dispatcherUsage = usage.find((u) => u.name === 'dispatcher');
      const deferrals = counters.circuitOpen + counters.backlogFull;
      const pipelineSeconds = usage.filter((u) => (SERVICES as readonly string[]).includes(u.name) || u.name === BROKER).reduce((total, u) => total + u.cpuSeconds, 0);
      const own = logOf(variant.destinationId);
      return {
        variant: variant.name,
        title: titleOf(variant, options),
        burstSeconds,
        burstEvents: accepted,
        healthyLatency: latency(`during-${variant.name}`),
        requests: own.requests,
        deferrals: { circuitOpen: own.circuitOpen, backlogFull: own.backlogFull },
        phaseDeferrals: deferrals,
        routerDeferrals: counters.router,
        schedulerDeferrals: counters.scheduler,
        processes: usage,
        dispatcherMicrosPerDeferral: dispatcherUsage && deferrals > 0 ? (dispatcherUsage.cpuSeconds * 1e6) / deferrals : Number.NaN,
        pipelineMicrosPerEvent: accepted > 0 ? (pipelineSeconds * 1e6) / accepted : Number.NaN,
        ...(steal !== undefined && { hostStealSeconds: steal }),
        peakBacklog: peak,
        slowestSeconds: slowestSeconds(trickleSeconds, startedPhase, startedPhase + seconds * 1000, 3, cpu),
        ...(profiled && { profile: windowedProfile(profiled.profile, micros, 15) }),
      };
    });

    const control = bursts.find((burst) => burst.variant === CONTROL.name)!;
    const variants = bursts.filter((burst) => burst !== control);
    const perDestination = VARIANTS_RUN.map(({ destinationId, name }) => {
      const letters = deadLetters.get(destinationId) ?? [];
      const own = logOf(destinationId);
      return {
        destinationId,
        deliveries: burstAccepted.get(destinationId) ?? 0,
        delivered: own.delivered,
        expired: letters.filter((letter) => letter.reason === 'expired').length,
        otherDeadLetters: letters.filter((letter) => letter.reason !== 'expired').length,
        attemptsAfterWindow: own.afterWindow,
        meanSteps: letters.length + own.delivered > 0 ? own.records / (letters.length + own.delivered) : Number.NaN,
        requests: own.requests,
        // What the receiver itself counted (connection refused: nothing can count it there).
        requestsReceived: name === 'refused' ? null : failingCounts[name === 'hanging' ? 'hang' : name === 'slow' ? 'slow' : 'fail'],
      };
    });
    const accounting = reconcile(BitSet.fromBase64(trickleFinal.acceptedBatches), BitSet.fromBase64(received.delivered), 1);
    const worstP99 = Math.max(...variants.map((v) => v.healthyLatency.p99Ms));
    const result: NoisyResult = {
      scenario: 'noisy-neighbour',
      startedAt: startedAt.toISOString(),
      durationSeconds: elapsed(),
      machine: { cores: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadAverageStart, loadAverageEnd: loadavg() },
      settings: {
        burstEvents: options.burstEvents,
        burstRate: options.burstRate,
        trickleRate: options.trickleRate,
        baselineSeconds: options.baselineSeconds,
        warmupSeconds: options.warmupSeconds,
        warmupMaxSeconds: options.warmupMaxSeconds,
        warmupFailingEvents: options.warmupFailingEvents,
        tailSeconds: options.tailSeconds,
        slowMs: options.slowMs,
        ladder: options.ladder,
        window: options.window,
        logLevel: options.logLevel,
        namespace,
        partitions,
        ...(options.profile && { profiledService: options.profile }),
        settings: options.settings,
      },
      warmup: warmedUp,
      baseline: { seconds: options.baselineSeconds, latency: baseline, slowestSeconds: slowestSeconds(trickleSeconds, baselineFrom, baselineTo) },
      control,
      variants,
      after: { latency: latency('after') },
      healthy: { accepted: accounting.acceptedMessages, lost: accounting.lost, duplicates: received.duplicates, signatures: received.signatures },
      ladder: {
        perDestination,
        allExpired: perDestination.every((d) => d.expired + (d.delivered ?? 0) === d.deliveries && d.otherDeadLetters === 0),
        waitedSeconds,
      },
      verdict: {
        p99WithinOneSecond: worstP99 <= 1000,
        p99WithinTwiceBaseline: worstP99 <= 2 * baseline.p99Ms,
        p99VersusControl: worstP99 / control.healthyLatency.p99Ms,
        noneAttemptedAfterWindow: perDestination.every((d) => d.attemptsAfterWindow === 0),
        // The slow receiver's deliveries: each delivered or expired, once.
        everyFailingDeliveryExpired: perDestination.every((d) => d.expired + (d.delivered ?? 0) === d.deliveries),
        healthyLost: accounting.lost,
      },
      notes,
    };
    await writeNoisyResults(result, stamp, options.label);
    if (accounting.lost > 0 || !result.verdict.noneAttemptedAfterWindow) process.exitCode = 1;
  } finally {
    await stopAll().catch(() => undefined);
    if (!options.keepTopics) await deleteNamespace(admin, namespace).catch((error: unknown) => say(`could not delete the run's topics: ${String(error)}`));
    await admin.disconnect();
    await stack.stop();
  }
}

interface PhaseCounters {
  circuitOpen: number;
  backlogFull: number;
  /** Deferred by the router, straight onto the ladder. */
  router: number;
  /** Deferred again by the retry-scheduler instead of released. */
  scheduler: number;
  /** Messages the router dropped as repeats of ids it had forwarded: none in a sound run. */
  duplicates: number;
}

interface AttemptLogCounts {
  records: number;
  requests: number;
  delivered: number;
  circuitOpen: number;
  backlogFull: number;
  afterWindow: number;
}

async function phaseCounters(dispatcherUrl: string, routerUrl: string, schedulerUrl: string): Promise<PhaseCounters> {
  const [circuitOpen, backlogFull, router, scheduler, duplicates] = await Promise.all([
    metricValue(dispatcherUrl, 'tributary_dispatcher_deferred_total', { reason: 'circuit_open' }),
    metricValue(dispatcherUrl, 'tributary_dispatcher_deferred_total', { reason: 'backlog_full' }),
    metricValue(routerUrl, 'tributary_router_deferred_total'),
    metricValue(schedulerUrl, 'tributary_retries_deferred_total'),
    metricValue(routerUrl, 'tributary_router_duplicates_total'),
  ]);
  return { circuitOpen, backlogFull, router, scheduler, duplicates };
}

function difference(after: PhaseCounters, before: PhaseCounters): PhaseCounters {
  return {
    circuitOpen: after.circuitOpen - before.circuitOpen,
    backlogFull: after.backlogFull - before.backlogFull,
    router: after.router - before.router,
    scheduler: after.scheduler - before.scheduler,
    duplicates: after.duplicates - before.duplicates,
  };
}

async function counts(failing: Child<FailingReceiverReport>): Promise<{ fail: number; hang: number; slow: number; slowAnswered: number }> {
  const answer = failing.next('counts', 10_000);
  failing.process.send({ kind: 'counts' });
  const { fail, hang, slow, slowAnswered } = (await answer) as Extract<FailingReceiverReport, { kind: 'counts' }>;
  return { fail, hang, slow, slowAnswered };
}

/** A loopback port nothing listens on: connection refused. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Reads a topic from the start to the end offsets it has now, handing every decoded value to `visit`. */
async function readWhole<T>(kafka: Kafka, admin: Admin, topic: string, decode: (value: Buffer) => Promise<T>, visit: (value: T) => void): Promise<void> {
  const ends = await admin.fetchTopicOffsets(topic);
  const remaining = new Map(ends.filter((end) => BigInt(end.high) > BigInt(end.low)).map((end) => [end.partition, BigInt(end.high)]));
  if (remaining.size === 0) return;
  const consumer = createConsumer(kafka, `${topic}-bench-reader-${Date.now()}`);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) if (message.value) visit(await decode(message.value));
          const high = remaining.get(batch.partition);
          if (high !== undefined && BigInt(batch.lastOffset()) + 1n >= high) remaining.delete(batch.partition);
          if (remaining.size === 0) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
}

async function readDeadLetters(kafka: Kafka, admin: Admin, codec: AvroCodec, topics: TopicNames): Promise<Map<string, DeadLetter[]>> {
  const byDestination = new Map<string, DeadLetter[]>();
  await readWhole(kafka, admin, topics.deadLetters, (value) => codec.decode<DeadLetter>('dlq', value), (letter) => {
    const list = byDestination.get(letter.delivery.destinationId) ?? [];
    list.push(letter);
    byDestination.set(letter.delivery.destinationId, list);
  });
  return byDestination;
}

const percent = (share: number | undefined) => (share === undefined ? 'an unknown share' : `${(share * 100).toFixed(1)} %`);

const WARMUP_SAMPLE_MS = 5_000;

/** Holds the warm-up load's time: at least the minimum, then until the broker's compilers are quiet or the maximum. */
async function warmUp(processes: ProcessTable, options: NoisyOptions): Promise<Omit<NonNullable<NoisyResult['warmup']>, 'failingEvents'>> {
  const jitNow = () => processes.snapshot().get(BROKER)?.jitThreads;
  const start = jitNow();
  const startedAt = Date.now();
  const secondsIn = () => (Date.now() - startedAt) / 1000;
  if (!start || start.size === 0) {
    await sleep(options.warmupSeconds * 1000);
    return { seconds: secondsIn(), ended: 'no broker', brokerJitCoreShare: undefined };
  }
  const samples: JitSample[] = [{ atSeconds: 0, jitSeconds: 0 }];
  for (;;) {
    await sleep(WARMUP_SAMPLE_MS);
    const now = jitNow();
    samples.push({ atSeconds: secondsIn(), jitSeconds: now ? jitSecondsBetween(start, now) : (samples.at(-1)?.jitSeconds ?? 0) });
    const verdict = warmupVerdict(samples, options.warmupSeconds, options.warmupMaxSeconds);
    if (verdict.done) return { seconds: secondsIn(), ended: verdict.reason, brokerJitCoreShare: verdict.jitCoreShare };
  }
}

const latencyCell = (l: LatencySummary) => `${ms(l.p50Ms)} / ${ms(l.p99Ms)} / ${ms(l.maxMs)}`;

function brokerJitCell(processes: readonly ProcessUsage[]): string {
  const seconds = processes.find((p) => p.name === BROKER)?.jitCpuSeconds;
  return seconds === undefined ? '–' : seconds.toFixed(1);
}

function warmupNote(warmup: NoisyResult['warmup']): string {
  if (!warmup) return '';
  const compilers = warmup.ended === 'no broker' ? 'no broker process watched' : `the broker's compilers then at ${percent(warmup.brokerJitCoreShare)} of a core`;
  const failing = warmup.failingEvents ? `, ${int(warmup.failingEvents)} events of it to a destination answering 503` : '';
  return `warm-up ${warmup.seconds.toFixed(0)} s (${compilers}${failing}); `;
}

export function renderNoisyMarkdown(result: NoisyResult): string {
  const lines: string[] = [
    `# Noisy neighbour, ${result.startedAt.slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${result.machine.cores} cores (${result.machine.cpuModel}); ${result.settings.partitions} partitions; healthy trickle ${result.settings.trickleRate} events/s; ` +
      `bursts of ${int(result.settings.burstEvents)} events at ${int(result.settings.burstRate)}/s; ${warmupNote(result.warmup)}ladder ${result.settings.ladder} within ${result.settings.window}; LOG_LEVEL=${result.settings.logLevel}${settingsNote(result.settings.settings)}.`,
    '',
    '| healthy destination | latency p50 / p99 / max, ms | slowest seconds of arrivals (into the phase: max) |',
    '|---|---:|---|',
    `| baseline (alone, ${result.baseline.seconds} s) | ${latencyCell(result.baseline.latency)} | ${slowestCell(result.baseline.slowestSeconds)} |`,
    ...(result.control ? [`| during the control burst to: ${result.control.title} | ${latencyCell(result.control.healthyLatency)} | ${slowestCell(result.control.slowestSeconds)} |`] : []),
    ...result.variants.map((v) => `| during the burst to: ${v.title} | ${latencyCell(v.healthyLatency)} | ${slowestCell(v.slowestSeconds)} |`),
    `| after the bursts | ${latencyCell(result.after.latency)} | |`,
    '',
    '| burst to | events | burst s | requests made (whole run) | deferred without a request: circuit open / backlog full | deferred by the router / the retry-scheduler (phase) | dispatcher CPU µs per deferral | pipeline CPU µs per burst event | ingest CPU µs per burst event | the machine’s steal time, CPU s | the broker’s JIT compilers, CPU s | largest backlog: router main / overflow / dispatcher |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[...(result.control ? [result.control] : []), ...result.variants].map(
      (v) =>
        `| ${v.title} | ${int(v.burstEvents)} | ${v.burstSeconds.toFixed(0)} | ${int(v.requests)} | ${int(v.deferrals.circuitOpen)} / ${int(v.deferrals.backlogFull)} | ${int(v.routerDeferrals)} / ${int(v.schedulerDeferrals)} | ` +
        `${int(v.dispatcherMicrosPerDeferral)} | ${int(v.pipelineMicrosPerEvent)} | ${int(v.processes.find((p) => p.name === 'ingest')?.cpuMsPer1kEvents ?? Number.NaN)} | ` +
        `${v.hostStealSeconds === undefined ? '–' : v.hostStealSeconds.toFixed(1)} | ${brokerJitCell(v.processes)} | ` +
        (v.peakBacklog ? `${int(v.peakBacklog.routerMain)} / ${int(v.peakBacklog.routerOverflow)} / ${int(v.peakBacklog.dispatcherFirst)} |` : '– |'),
    ),
    '',
    '| failing destination | deliveries | delivered | `expired` dead letters | other dead letters | attempts after the window | ladder steps per delivery (attempts + deferrals) | requests: attempt log / receiver |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...result.ladder.perDestination.map(
      (d) =>
        `| ${d.destinationId} | ${int(d.deliveries)} | ${d.delivered === undefined ? '–' : int(d.delivered)} | ${int(d.expired)} | ${int(d.otherDeadLetters)} | ${int(d.attemptsAfterWindow)} | ${d.meanSteps.toFixed(1)} | ` +
        `${int(d.requests)} / ${d.requestsReceived === null ? '–' : int(d.requestsReceived)} |`,
    ),
    '',
    `Healthy destination: ${int(result.healthy.accepted)} accepted, ${int(result.healthy.lost)} lost, ${int(result.healthy.duplicates)} duplicated; signatures ${int(result.healthy.signatures.valid)} valid, ${int(result.healthy.signatures.invalid)} invalid.`,
    '',
    `Verdict: healthy p99 ≤ 1 s: **${result.verdict.p99WithinOneSecond ? 'yes' : 'no'}**; ≤ 2 × baseline p99: **${result.verdict.p99WithinTwiceBaseline ? 'yes' : 'no'}**; ` +
      (result.control ? `worst failing burst's p99 ÷ the control burst's: **${result.verdict.p99VersusControl.toFixed(2)}**; ` : '') +
      `no attempt after the window: **${result.verdict.noneAttemptedAfterWindow ? 'yes' : 'no'}**; every failing delivery expired through the ladder (a slow one: delivered or expired): **${result.verdict.everyFailingDeliveryExpired ? 'yes' : 'no'}** (waited ${result.ladder.waitedSeconds.toFixed(0)} s).`,
  ];
  if (result.notes.length > 0) lines.push('', ...result.notes.map((note) => `- ${note}`));
  lines.push('', 'CPU per process and phase (`cpuMsPer1kEvents` is ms per 1,000 burst events, i.e. µs per failing delivery): see the JSON.');
  for (const v of [...(result.control ? [result.control] : []), ...result.variants]) {
    if (v.profile && result.settings.profiledService) lines.push('', ...profileMarkdown(result.settings.profiledService, `the burst to ${v.title} and its tail`, v.profile.summary));
  }
  return `${lines.join('\n')}\n`;
}

async function writeNoisyResults(result: NoisyResult, stamp: string, label: string | undefined): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const base = `noisy-neighbour-${stamp}${label ? `-${label}` : ''}`;
  const markdown = renderNoisyMarkdown(result);
  await writeFile(join(RESULTS_DIR, `${base}.json`), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(RESULTS_DIR, `${base}.md`), markdown);
  await writeFile(join(RESULTS_DIR, 'noisy-neighbour-latest.md'), markdown);
  await writeFile(join(RESULTS_DIR, 'noisy-neighbour-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`\n${markdown}\n`);
  say(`results: test/bench/results/${base}.{json,md} (and noisy-neighbour-latest.*)`);
}
