import { describe, expect, it } from 'vitest';
import { DEFAULT_RAMP } from './ramp.js';
import { int, mainThreadShare, ms, renderMarkdown } from './report.js';
import type { BenchResult, PhaseResult, ProcessUsage } from './result.js';

const latency = { count: 100, meanMs: 60, p50Ms: 53.2, p95Ms: 98, p99Ms: 155.4, maxMs: 273 };
const usage = (name: string, cpuSeconds: number): ProcessUsage => ({
  name,
  pid: 1,
  cpuSeconds,
  systemShare: 0.1,
  corePercent: (cpuSeconds / 60) * 100,
  cpuMsPer1kEvents: (cpuSeconds * 1e6) / 60_000,
  peakRssBytes: 300 * 1024 * 1024,
});
const phase = (name: string, rate: number): PhaseResult => ({
  name,
  label: `(${name === 'max' ? 'a' : 'b'}) ${int(rate)}/s`,
  offeredRate: rate,
  seconds: 60,
  sentEvents: rate * 60,
  lateEvents: 0,
  acceptedEvents: rate * 60,
  acceptedRate: rate,
  deliveredEvents: rate * 60,
  deliveredRate: rate,
  latency,
  requestLatency: latency,
  backlogAtEnd: 0,
  kafkaLagAtEnd: { router: 0, dispatcher: 0, indexer: 0 },
  drainSeconds: 0.5,
  drained: true,
  processes: [{ ...usage('router', 24), mainThreadCpuSeconds: 18 }, usage('dispatcher', 30)],
  transactions: { ingest: { perSecond: 39, meanRecords: 101, meanMs: 11 }, router: { perSecond: 84, meanDeliveries: 46, meanMs: 9.5 } },
});

function result(): BenchResult {
  return {
    startedAt: '2026-11-21T14:01:11.035Z',
    finishedAt: '2026-11-21T14:05:00.000Z',
    durationSeconds: 229,
    machine: { cpuModel: 'Xeon', cores: 2, memoryBytes: 24 * 1024 ** 3, kernel: '6.1', node: 'v20.20.2', java: '17', kafka: '3.9.1', registry: 'Apicurio Registry 3.0.9', loadAverageStart: [1.5, 1, 1], loadAverageEnd: [4.33, 2, 1] },
    settings: {
      namespace: 'bench-x',
      stackProvider: 'local-jvm, reused',
      partitions: 6,
      batchSize: 100,
      logLevel: 'warn',
      profiledService: undefined,
      ramp: { ...DEFAULT_RAMP, stepSeconds: 10, measuredSeconds: 6 },
      holdSeconds: 60,
      steadyRate: 1000,
      steadySeconds: 60,
      serviceEnv: {},
    },
    limits: {
      http: { connections: 64, seconds: 12, requestsPerSecond: 20_000, errors: 0, latency, bodyBytes: 740, processes: [] },
      kafka: { partitions: 6, recordBytes: 500, seconds: 12, produced: 1, consumed: 1, producedPerSecond: 31_000, endToEndPerSecond: 31_300, processes: [] },
    },
    ramp: { steps: [], sustainableRate: 3900, why: '4,400/s was not sustained' },
    phases: { max: phase('max', 3900), steady: phase('steady', 1000) },
    idle: [usage('router', 3), usage('dispatcher', 3)],
    ratios: { deliveredVsHttpLimit: 3900 / 20_000, deliveredVsKafkaLimit: 3900 / 31_300 },
    integrity: {
      acceptedEvents: 10,
      deliveredOfAccepted: 10,
      lost: 0,
      lostSample: [],
      duplicates: 0,
      deliveredUnacknowledged: 0,
      foreignRequests: 0,
      signatures: { valid: 10, invalid: 0, missing: 0 },
      refusedByStatus: {},
      kafkaLagAtEnd: { router: 0, dispatcher: 0, indexer: 0 },
    },
    processes: [usage('router', 100), usage('dispatcher', 100)],
    timeline: [],
    timelinePhases: [],
    notes: ['a note'],
  };
}

describe('renderMarkdown', () => {
  it('puts both phases side by side, with the latency percentiles and the delivered rates', () => {
    const md = renderMarkdown(result(), 'run.svg');
    expect(md).toContain('| | (a) 3,900/s | (b) 1,000/s |');
    expect(md).toContain('| **delivered to the receiver, events/s** | **3,900** | **1,000** |');
    expect(md).toContain('| **end-to-end latency p50 / p95 / p99 / max, ms** | **53 / 98 / 155 / 273** | **53 / 98 / 155 / 273** |');
    expect(md).toContain('| router transactions/s, mean deliveries, mean ms | 84, 46, 9.5 | 84, 46, 9.5 |');
  });

  it('gives the pipeline/limit ratios and the integrity line', () => {
    const md = renderMarkdown(result(), 'run.svg');
    expect(md).toMatch(/undici POSTs.* \| 20,000\/s \| 0\.20 \|/);
    expect(md).toMatch(/kafkajs produce → consume.* \| 31,300\/s \| 0\.12 \|/);
    expect(md).toContain('**0 lost**, **0 duplicated**');
    expect(md).toContain('![latency and throughput over time](run.svg)');
    expect(md).toContain('- a note');
  });

  it('sums the processes per phase and shows the kernel share of each', () => {
    const md = renderMarkdown(result(), 'run.svg');
    expect(md).toContain('| router | 5 % | 24.0 (10 %) | 40 % | 400 | 24.0 (10 %) | 40 % | 400 | 75 % / 75 % | 300 |');
    expect(md).toContain('| dispatcher | 5 % | 30.0 (10 %) | 50 % | 500 | 30.0 (10 %) | 50 % | 500 | – / – | 300 |');
    expect(md).toContain('| **all** | 10 % | 54.0 | 90 % | | 54.0 | 90 % | | | |');
  });

  it("gives a Node process's main-thread share, and none for a JVM or a result without it", () => {
    expect(mainThreadShare({ ...usage('router', 10), mainThreadCpuSeconds: 4.5 })).toBe('45 %');
    expect(mainThreadShare({ ...usage('Kafka broker (JVM)', 10), mainThreadCpuSeconds: 0.01, jitCpuSeconds: 2 })).toBe('–');
    expect(mainThreadShare(usage('router', 10))).toBe('–');
    expect(mainThreadShare({ ...usage('router', 0), mainThreadCpuSeconds: 0 })).toBe('–');
    expect(mainThreadShare(undefined)).toBe('–');
  });

  it('states the pipeline CPU bill with the indexer beside it, and leaves it out of older results', () => {
    const budget = { processes: ['router', 'dispatcher'], maxMsPer1k: 212.4, steadyMsPer1k: 380, idlePercent: 8.25, indexer: { maxMsPer1k: 61, steadyMsPer1k: 95, idlePercent: 1.5 } };
    const md = renderMarkdown({ ...result(), cpuBudget: budget }, 'run.svg');
    expect(md).toContain('**Pipeline CPU** (router, dispatcher): **212 ms per 1,000 delivered events in (a)**, 380 in (b); **idle 8.3 % of one core**.');
    expect(md).toContain('The indexer (delivery log) adds 61 ms per 1,000 events in (a), 95 in (b), 1.5 % of a core idle.');
    expect(renderMarkdown(result(), 'run.svg')).not.toContain('Pipeline CPU');
  });

  it("separates the broker's JIT compilation from the bill when it was measured", () => {
    const budget = { processes: ['router', 'Kafka broker (JVM)'], maxMsPer1k: 900, steadyMsPer1k: 800, idlePercent: 10, indexer: { maxMsPer1k: 0, steadyMsPer1k: 0, idlePercent: 0 }, jit: { maxMsPer1k: 250, steadyMsPer1k: 120 } };
    const md = renderMarkdown({ ...result(), cpuBudget: budget }, 'run.svg');
    expect(md).toContain("**900 ms per 1,000 delivered events in (a)**, 800 in (b) (of which the broker's JIT compilers, a cost of a broker minutes old: 250 in (a), 120 in (b); without them 650 and 680);");
  });
});

describe('number formats', () => {
  it('keeps a decimal below 10 ms and shows missing values as a dash', () => {
    expect(ms(4.26)).toBe('4.3');
    expect(ms(155.4)).toBe('155');
    expect(ms(Number.NaN)).toBe('–');
    expect(int(1234567.8)).toBe('1,234,568');
  });
});
