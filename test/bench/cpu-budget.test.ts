import { describe, expect, it } from 'vitest';
import { cpuBudget } from './cpu-budget.js';
import type { ProcessUsage } from './result.js';

const usage = (name: string, cpuMsPer1kEvents: number, corePercent: number): ProcessUsage => ({ name, pid: 1, cpuSeconds: 1, systemShare: 0, corePercent, cpuMsPer1kEvents, peakRssBytes: undefined });

describe('cpuBudget', () => {
  it('sums the delivery path and the broker, and keeps the indexer and the harness out of it', () => {
    const phase = [usage('ingest', 50, 20), usage('router', 60, 25), usage('Kafka broker (JVM)', 70, 30), usage('indexer', 40, 15), usage('webhook receiver', 35, 10)];
    const budget = cpuBudget(['ingest', 'router', 'Kafka broker (JVM)'], 'indexer', { max: phase, steady: phase.map((u) => ({ ...u, cpuMsPer1kEvents: u.cpuMsPer1kEvents * 2 })), idle: [usage('ingest', 0, 1), usage('indexer', 0, 2), usage('Kafka broker (JVM)', 0, 3)] });
    expect(budget).toEqual({
      processes: ['ingest', 'router', 'Kafka broker (JVM)'],
      maxMsPer1k: 180,
      steadyMsPer1k: 360,
      idlePercent: 4,
      indexer: { maxMsPer1k: 40, steadyMsPer1k: 80, idlePercent: 2 },
    });
  });

  it("counts the path JVMs' JIT compilation, per 1,000 events, when it was measured", () => {
    // The broker: 2 s of CPU at 700 ms per 1,000 events, half a second of it compiling.
    const broker = { ...usage('Kafka broker (JVM)', 700, 30), cpuSeconds: 2, jitCpuSeconds: 0.5 };
    const registry = { ...usage('schema registry (JVM)', 10, 1), jitCpuSeconds: 1 };
    const budget = cpuBudget(['ingest', 'Kafka broker (JVM)'], 'indexer', { max: [usage('ingest', 50, 20), broker, registry], steady: [broker], idle: [] });
    expect(budget.jit).toEqual({ maxMsPer1k: 175, steadyMsPer1k: 175 });
    expect(cpuBudget(['ingest'], 'indexer', { max: [usage('ingest', 50, 20)], steady: [], idle: [] }).jit).toBeUndefined();
  });

  it('adds the idle share after the run when it was measured', () => {
    const phase = [usage('ingest', 50, 20), usage('indexer', 40, 15)];
    const budget = cpuBudget(['ingest'], 'indexer', { max: phase, steady: phase, idle: [usage('ingest', 0, 6)], idleAfter: [usage('ingest', 0, 2), usage('indexer', 0, 1)] });
    expect(budget).toMatchObject({ idlePercent: 6, idleAfterPercent: 2, indexer: { idlePercent: 0, idleAfterPercent: 1 } });
  });
});
