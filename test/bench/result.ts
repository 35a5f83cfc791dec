/** The shape of `test/bench/results/<timestamp>.json`: every figure of a run and how it was made. */
import type { ChartPhase, ChartPoint } from './chart.js';
import type { ProfileSummary } from './cpu-profile.js';
import type { LatencySummary } from './histogram.js';
import type { RampPolicy, StepVerdict } from './ramp.js';
import type { KafkaRequestRates, TransactionRates } from './service-metrics.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  node: string;
  java: string;
  kafka: string;
  registry: string;
  /** os.loadavg() (1, 5, 15 min) when the run started and ended. */
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

export interface ProcessUsage {
  name: string;
  pid: number;
  cpuSeconds: number;
  /** Share of cpuSeconds spent in the kernel, 0–1. */
  systemShare: number;
  /** Average share of one core over the interval, in percent. */
  corePercent: number;
  /** CPU milliseconds per 1,000 events delivered in the interval. */
  cpuMsPer1kEvents: number;
  peakRssBytes: number | undefined;
  /** Of cpuSeconds, what a JVM's JIT compiler threads spent (JVMs only; absent from older results). */
  jitCpuSeconds?: number;
  /**
   * Of cpuSeconds, what the main thread spent — for a Node service, what its CPU profile can
   * see; the rest is V8's helper threads (GC, compiling) and libuv's pool (absent from results
   * before 27 November 2026).
   */
  mainThreadCpuSeconds?: number;
}

export interface PhaseResult {
  name: string;
  label: string;
  offeredRate: number;
  seconds: number;
  sentEvents: number;
  lateEvents: number;
  acceptedEvents: number;
  acceptedRate: number;
  /** First arrivals at the receiver during the phase's window (whatever phase they were sent in). */
  deliveredEvents: number;
  deliveredRate: number;
  /** Client send → receiver, for the messages sent in this phase (arrivals after its end included). */
  latency: LatencySummary;
  /** Ingest's answer time as the generator saw it. */
  requestLatency: LatencySummary;
  /** accepted − delivered when the phase ended. */
  backlogAtEnd: number;
  kafkaLagAtEnd: KafkaLag;
  /** Until every accepted message had arrived (or the wait gave up). */
  drainSeconds: number;
  drained: boolean;
  processes: ProcessUsage[];
  /** Kafka transactions of ingest and the router, from their /metrics. */
  transactions: TransactionRates;
  /** Requests the services sent to Kafka (`tributary_kafka_requests_total`); absent in results older than it. */
  kafkaRequests?: KafkaRequestRates;
}

export interface KafkaLag {
  router: number;
  dispatcher: number;
  /** The delivery log's indexer (ingest and attempts topics); not on the delivery path. */
  indexer: number;
}

/** CPU of the pipeline per 1,000 delivered events and at rest, in one run. */
export interface CpuBudget {
  /** What is summed: the delivery path's services and the broker. */
  processes: string[];
  maxMsPer1k: number;
  steadyMsPer1k: number;
  /** Share of one core with no load, percent: right after the warm-up, and after the run (absent from older results). */
  idlePercent: number;
  idleAfterPercent?: number;
  /** What the indexer adds on top. */
  indexer: { maxMsPer1k: number; steadyMsPer1k: number; idlePercent: number; idleAfterPercent?: number };
  /**
   * Of maxMsPer1k and steadyMsPer1k, what the summed JVMs (the broker) spent compiling: a cost of
   * the bench's young broker that a long-running one no longer pays (absent from older results).
   */
  jit?: { maxMsPer1k: number; steadyMsPer1k: number };
}

export interface RampStep extends StepVerdict {
  kafkaLagEnd: number;
  backlogEnd: number;
  /** Client send → receiver for the step's messages. */
  latency?: LatencySummary;
}

export interface Limits {
  http: {
    connections: number;
    seconds: number;
    requestsPerSecond: number;
    errors: number;
    latency: LatencySummary;
    bodyBytes: number;
    processes: ProcessUsage[];
  };
  kafka: {
    partitions: number;
    recordBytes: number;
    seconds: number;
    produced: number;
    consumed: number;
    producedPerSecond: number;
    /** Records consumed ÷ (last consumed − first produced). */
    endToEndPerSecond: number;
    processes: ProcessUsage[];
  };
}

export interface Integrity {
  acceptedEvents: number;
  deliveredOfAccepted: number;
  lost: number;
  lostSample: number[];
  duplicates: number;
  deliveredUnacknowledged: number;
  foreignRequests: number;
  signatures: { valid: number; invalid: number; missing: number };
  refusedByStatus: Record<string, number>;
  kafkaLagAtEnd: KafkaLag;
}

export interface BenchResult {
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  machine: MachineInfo;
  settings: {
    namespace: string;
    stackProvider: string;
    partitions: number;
    batchSize: number;
    logLevel: string;
    profiledService: string | undefined;
    ramp: RampPolicy & { stepSeconds: number; measuredSeconds: number };
    holdSeconds: number;
    steadyRate: number;
    steadySeconds: number;
    serviceEnv: Record<string, string>;
  };
  limits: Limits;
  ramp: { steps: RampStep[]; sustainableRate: number; why: string };
  phases: { max: PhaseResult; steady: PhaseResult };
  /** Every process over IDLE_SECONDS with the services running and no load, right after the warm-up. */
  idle: ProcessUsage[];
  /**
   * The same after the run, once the JVMs have compiled their hot paths as a long-running
   * broker has (right after the warm-up the broker is still compiling). Absent from older results.
   */
  idleAfter?: ProcessUsage[];
  ratios: { deliveredVsHttpLimit: number; deliveredVsKafkaLimit: number };
  /** Absent from results written before it was added. */
  cpuBudget?: CpuBudget;
  integrity: Integrity;
  /** Whole run, start of the services to the end. */
  processes: ProcessUsage[];
  timeline: ChartPoint[];
  timelinePhases: ChartPhase[];
  profile?: {
    service: string;
    file: string;
    windowSeconds: [number, number];
    /** The same window in microseconds since the profile's start, as summarised. */
    windowMicros: [number, number];
    summary: ProfileSummary;
  };
  notes: string[];
}
