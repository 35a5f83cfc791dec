/**
 * Messages between the orchestrator and its child processes (receiver, load generator,
 * limit probes) over the Node IPC channel. Each child reports once a second; the
 * orchestrator merges the windows into the time series and phase totals.
 */
import type { HistogramJson } from './histogram.js';

/** Receiver → orchestrator. */
export type ReceiverReport =
  | { kind: 'listening'; port: number }
  /** The first webhook the pipeline delivered, to replay in the HTTP limit probe. */
  | { kind: 'sample'; body: string; signature: string }
  | ReceiverWindow
  | ReceiverFinal;

export interface ReceiverWindow {
  kind: 'window';
  fromMs: number;
  toMs: number;
  /** First arrivals of messages of ours in the window. */
  delivered: number;
  duplicates: number;
  /** Client send → arrival, first arrivals only. */
  latency: HistogramJson;
}

export interface ReceiverFinal {
  kind: 'final';
  /** Base64 bit set of the sequence numbers that arrived. */
  delivered: string;
  deliveredCount: number;
  duplicates: number;
  /** Requests whose body was not one of our messages. */
  foreign: number;
  signatures: { valid: number; invalid: number; missing: number };
  /** Latency per phase tag (properties.phase), first arrivals only. */
  phases: Record<string, HistogramJson>;
  /** Requests of the HTTP limit probe (path /limit). */
  limitRequests: number;
}

/** Orchestrator → receiver: report the current window now (`flush`), or the totals. */
export type ReceiverCommand = { kind: 'flush' } | { kind: 'final' };

/** Load generator → orchestrator. */
export type GeneratorReport = GeneratorWindow | GeneratorFinal;

export interface GeneratorWindow {
  kind: 'window';
  fromMs: number;
  toMs: number;
  /** Events (not requests) sent, sent more than LATE_MS behind schedule, answered 200, answered otherwise or failed. */
  sent: number;
  sentLate: number;
  accepted: number;
  refused: number;
  /** Requests waiting for a free connection at the window's end. */
  queued: number;
  requestLatency: HistogramJson;
}

export interface GeneratorFinal {
  kind: 'final';
  /** Base64 bit set of the batch numbers answered 200. */
  acceptedBatches: string;
  batchesSent: number;
  /** Answers other than 200, by status ("error" for transport failures). */
  refusedByStatus: Record<string, number>;
  phases: Record<string, GeneratorPhase>;
}

export interface GeneratorPhase {
  sentEvents: number;
  acceptedEvents: number;
  lateEvents: number;
  requestLatency: HistogramJson;
}

/**
 * Orchestrator → load generator: offer `rate` events/s tagged `phase` from now on (0: stop);
 * report the current window now; or the totals.
 */
export type GeneratorCommand = { kind: 'rate'; rate: number; phase: string } | { kind: 'flush' } | { kind: 'final' };

/** Result of the HTTP limit probe. */
export interface HttpLimitResult {
  kind: 'http-limit';
  seconds: number;
  connections: number;
  requests: number;
  requestsPerSecond: number;
  errors: number;
  latency: HistogramJson;
}

/** Result of one side of the Kafka limit probe. */
export interface KafkaLimitResult {
  kind: 'kafka-limit';
  role: 'produce' | 'consume';
  records: number;
  firstMs: number;
  lastMs: number;
}

/** Kafka consumer side: records read so far. */
export interface KafkaLimitProgress {
  kind: 'kafka-limit-progress';
  records: number;
}

/** Kafka consumer side: joined its group and is ready to read. */
export interface KafkaLimitReady {
  kind: 'kafka-limit-ready';
}

/** Failing receiver (noisy-neighbour scenario) → orchestrator. */
export type FailingReceiverReport =
  | { kind: 'listening'; port: number }
  | { kind: 'counts'; fail: number; warmupFail: number; hang: number; ok: number; slow: number; slowAnswered: number; other: number; hangingNow: number };

/** Orchestrator → failing receiver: report the request counts so far. */
export type FailingReceiverCommand = { kind: 'counts' };
