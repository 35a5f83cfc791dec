/** `npm run bench -- [options]`: what the run takes from its command line. */
import { parseArgs } from 'node:util';
import { parseDuration } from '@tributary/shared';
import type { NoisyOptions } from './noisy-neighbour.js';
import { DEFAULT_RAMP, type RampPolicy } from './ramp.js';

export const SERVICES = ['ingest', 'router', 'dispatcher', 'retry-scheduler', 'indexer'] as const;
/** The services every event passes through; the indexer (the delivery log) is beside the path and reported apart. */
export const DELIVERY_PATH: readonly BenchService[] = ['ingest', 'router', 'dispatcher', 'retry-scheduler'];
export type BenchService = (typeof SERVICES)[number];

export interface BenchOptions {
  /** Start this service with --cpu-prof and summarise its profile over phase (a). */
  profile: BenchService | undefined;
  logLevel: string;
  ramp: RampPolicy;
  stepSeconds: number;
  /** The last seconds of each step, over which it is judged. */
  measuredSeconds: number;
  holdSeconds: number;
  steadyRate: number;
  steadySeconds: number;
  limitSeconds: number;
  /** KAFKA_TOPIC_PARTITIONS for the services; undefined = the broker's num.partitions. */
  partitions: number | undefined;
  /** Appended to the result files' names (e.g. "before"). */
  label: string | undefined;
  keepTopics: boolean;
  /**
   * The services the run starts: all of them by default — the pipeline as deployed, the
   * delivery log's indexer included, whose lag then counts in the ramp's judgement — or the
   * delivery path alone (`--without-indexer`), as runs before the delivery log measured it.
   */
  services: readonly BenchService[];
  /** Extra settings for every service (`--set KEY=VALUE`, repeatable): a setting measured without a rebuild. */
  settings: Record<string, string>;
}

export const USAGE = `usage: npm run bench -- [--profile=<${SERVICES.join('|')}>] [--log-level=warn] [--label=<name>]
  [--start-rate=2000] [--step-seconds=10] [--hold-seconds=60] [--steady-rate=1000] [--steady-seconds=60]
  [--limit-seconds=12] [--partitions=<broker default>] [--keep-topics] [--without-indexer] [--set KEY=VALUE ...]
   or: npm run bench -- --scenario=noisy-neighbour [--burst-events=100000] [--burst-rate=1000]
  [--trickle-rate=20] [--warmup-seconds=30] [--warmup-max-seconds=300] [--warmup-failing-events=20000] [--baseline-seconds=30] [--tail-seconds=10] [--slow-ms=<off>] [--ladder=10s,1m] [--window=3m]
  [--profile=<${SERVICES.join('|')}>] [--log-level=warn] [--label=<name>] [--partitions=<broker default>] [--keep-topics] [--set KEY=VALUE ...]
   or: npm run bench -- --scenario=audience-sync [--members=1000000] [--joined=10000] [--left=5000] [--ingest-heap-mb=N]`;

export type Scenario = 'throughput' | 'noisy-neighbour' | 'audience-sync';

/** Which scenario the command line asks for (`--scenario=…`, default the throughput run). */
export function scenarioOf(argv: string[]): Scenario {
  const given = argv.find((arg) => arg.startsWith('--scenario='))?.slice('--scenario='.length);
  if (given === undefined || given === 'throughput') return 'throughput';
  if (given === 'noisy-neighbour' || given === 'audience-sync') return given;
  throw new Error(`--scenario takes throughput, noisy-neighbour or audience-sync, got "${given}"\n${USAGE}`);
}

export function parseNoisyOptions(argv: string[]): NoisyOptions {
  const { values } = parseArgs({
    args: argv.filter((arg) => !arg.startsWith('--scenario=')),
    strict: true,
    options: {
      'burst-events': { type: 'string' },
      'burst-rate': { type: 'string' },
      'trickle-rate': { type: 'string' },
      'baseline-seconds': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      'warmup-max-seconds': { type: 'string' },
      'warmup-failing-events': { type: 'string' },
      'tail-seconds': { type: 'string' },
      'slow-ms': { type: 'string' },
      ladder: { type: 'string' },
      window: { type: 'string' },
      'log-level': { type: 'string' },
      label: { type: 'string' },
      partitions: { type: 'string' },
      'keep-topics': { type: 'boolean' },
      profile: { type: 'string' },
      set: { type: 'string', multiple: true },
    },
  });
  const logLevel = values['log-level'] ?? 'warn';
  if (!['fatal', 'error', 'warn', 'info', 'debug'].includes(logLevel)) throw new Error(`--log-level must be fatal, error, warn, info or debug\n${USAGE}`);
  if (values.label !== undefined && !/^[a-z0-9-]+$/.test(values.label)) throw new Error(`--label takes lower-case letters, digits and "-"\n${USAGE}`);
  const profile = profiledService(values.profile);
  // The production ladder's first two tiers, with the window cut to 3 minutes so that every
  // failing delivery's end is seen within the run. A ladder scaled down further (5s,10s,20s
  // within 60 s) puts four re-reads of each failing delivery inside a 100 s burst, a load the
  // real ladder never brings that fast.
  const ladder = values.ladder ?? '10s,1m';
  const window = values.window ?? '3m';
  try {
    ladder.split(',').forEach(parseDuration);
    parseDuration(window);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${USAGE}`);
  }
  const warmupSeconds = positive('warmup-seconds', values['warmup-seconds'], 30);
  const warmupMaxSeconds = positive('warmup-max-seconds', values['warmup-max-seconds'], Math.max(300, warmupSeconds));
  if (warmupMaxSeconds < warmupSeconds) throw new Error(`--warmup-max-seconds (${warmupMaxSeconds}) must be at least --warmup-seconds (${warmupSeconds})\n${USAGE}`);
  return {
    burstEvents: Math.round(positive('burst-events', values['burst-events'], 100_000)),
    burstRate: positive('burst-rate', values['burst-rate'], 1_000),
    trickleRate: positive('trickle-rate', values['trickle-rate'], 20),
    baselineSeconds: positive('baseline-seconds', values['baseline-seconds'], 30),
    warmupSeconds,
    warmupMaxSeconds,
    warmupFailingEvents: Math.round(positiveOrZero('warmup-failing-events', values['warmup-failing-events'], 20_000)),
    tailSeconds: positive('tail-seconds', values['tail-seconds'], 10),
    slowMs: values['slow-ms'] === undefined ? 0 : Math.round(positive('slow-ms', values['slow-ms'], 3_000)),
    ladder,
    window,
    logLevel,
    partitions: values.partitions === undefined ? undefined : Math.round(positive('partitions', values.partitions, 1)),
    label: values.label,
    keepTopics: values['keep-topics'] ?? false,
    profile,
    settings: parseSettings(values.set),
  };
}

/** `--profile=<service>`: a service of the pipeline, or none. */
function profiledService(value: string | undefined): BenchService | undefined {
  if (value === undefined) return undefined;
  if (!(SERVICES as readonly string[]).includes(value)) throw new Error(`--profile must name a service (${SERVICES.join(', ')}), got "${value}"\n${USAGE}`);
  return value as BenchService;
}

/**
 * `--set KEY=VALUE` pairs for the services' environment. Only setting names (upper-case
 * words); the values are checked by the services themselves, which refuse to start on a bad one.
 */
export function parseSettings(pairs: string[] | undefined): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) throw new Error(`--set takes KEY=VALUE with an upper-case setting name, got "${pair}"\n${USAGE}`);
    settings[match[1]!] = match[2]!;
  }
  return settings;
}

/** The `--set` settings, as they read in a report's header (nothing when there were none). */
export function settingsNote(settings: Record<string, string> | undefined): string {
  const pairs = Object.entries(settings ?? {});
  return pairs.length === 0 ? '' : `; set: ${pairs.map(([key, value]) => `${key}=${value}`).join(', ')}`;
}

/** As `positive`, and 0 too: a count where 0 turns something off. */
function positiveOrZero(name: string, text: string | undefined, fallback: number): number {
  return text !== undefined && Number(text) === 0 ? 0 : positive(name, text, fallback);
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got "${text}"\n${USAGE}`);
  return value;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      profile: { type: 'string' },
      'log-level': { type: 'string' },
      label: { type: 'string' },
      'start-rate': { type: 'string' },
      'step-seconds': { type: 'string' },
      'hold-seconds': { type: 'string' },
      'steady-rate': { type: 'string' },
      'steady-seconds': { type: 'string' },
      'limit-seconds': { type: 'string' },
      partitions: { type: 'string' },
      'keep-topics': { type: 'boolean' },
      'without-indexer': { type: 'boolean' },
      set: { type: 'string', multiple: true },
    },
  });
  const profile = profiledService(values.profile);
  const services = values['without-indexer'] ? DELIVERY_PATH : SERVICES;
  if (profile !== undefined && !(services as readonly string[]).includes(profile)) throw new Error(`--profile=${profile} names a service this run does not start\n${USAGE}`);
  const logLevel = values['log-level'] ?? 'warn';
  if (!['fatal', 'error', 'warn', 'info', 'debug'].includes(logLevel)) throw new Error(`--log-level must be fatal, error, warn, info or debug\n${USAGE}`);
  if (values.label !== undefined && !/^[a-z0-9-]+$/.test(values.label)) throw new Error(`--label takes lower-case letters, digits and "-"\n${USAGE}`);
  const stepSeconds = positive('step-seconds', values['step-seconds'], 10);
  return {
    profile,
    logLevel,
    ramp: { ...DEFAULT_RAMP, startRate: positive('start-rate', values['start-rate'], DEFAULT_RAMP.startRate) },
    stepSeconds,
    measuredSeconds: Math.max(1, Math.round(stepSeconds * 0.6)),
    holdSeconds: positive('hold-seconds', values['hold-seconds'], 60),
    steadyRate: positive('steady-rate', values['steady-rate'], 1000),
    steadySeconds: positive('steady-seconds', values['steady-seconds'], 60),
    limitSeconds: positive('limit-seconds', values['limit-seconds'], 12),
    partitions: values.partitions === undefined ? undefined : Math.round(positive('partitions', values.partitions, 1)),
    label: values.label,
    keepTopics: values['keep-topics'] ?? false,
    services,
    settings: parseSettings(values.set),
  };
}
