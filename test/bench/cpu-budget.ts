/**
 * The pipeline's CPU bill in one run: the delivery path's services and the broker, per 1,000
 * delivered events at the maximum and at the steady rate, and at rest — the figures the
 * throughput goals are stated in — with the indexer's share beside them rather than in them,
 * since the delivery log is not on the path an event takes.
 */
import type { CpuBudget, ProcessUsage } from './result.js';

export function cpuBudget(
  pathProcesses: readonly string[],
  indexer: string,
  usage: { max: ProcessUsage[]; steady: ProcessUsage[]; idle: ProcessUsage[]; idleAfter?: ProcessUsage[] | undefined },
): CpuBudget {
  const sum = (list: ProcessUsage[], field: 'cpuMsPer1kEvents' | 'corePercent', names: readonly string[]) =>
    list.filter((u) => names.includes(u.name)).reduce((total, u) => total + u[field], 0);
  const { idleAfter } = usage;
  const jitMsPer1k = (list: ProcessUsage[]) =>
    list.filter((u) => pathProcesses.includes(u.name) && u.cpuSeconds > 0).reduce((total, u) => total + ((u.jitCpuSeconds ?? 0) / u.cpuSeconds) * u.cpuMsPer1kEvents, 0);
  const measuredJit = [...usage.max, ...usage.steady].some((u) => pathProcesses.includes(u.name) && u.jitCpuSeconds !== undefined);
  return {
    processes: [...pathProcesses],
    maxMsPer1k: sum(usage.max, 'cpuMsPer1kEvents', pathProcesses),
    steadyMsPer1k: sum(usage.steady, 'cpuMsPer1kEvents', pathProcesses),
    idlePercent: sum(usage.idle, 'corePercent', pathProcesses),
    ...(idleAfter ? { idleAfterPercent: sum(idleAfter, 'corePercent', pathProcesses) } : {}),
    indexer: {
      maxMsPer1k: sum(usage.max, 'cpuMsPer1kEvents', [indexer]),
      steadyMsPer1k: sum(usage.steady, 'cpuMsPer1kEvents', [indexer]),
      idlePercent: sum(usage.idle, 'corePercent', [indexer]),
      ...(idleAfter ? { idleAfterPercent: sum(idleAfter, 'corePercent', [indexer]) } : {}),
    },
    ...(measuredJit ? { jit: { maxMsPer1k: jitMsPer1k(usage.max), steadyMsPer1k: jitMsPer1k(usage.steady) } } : {}),
  };
}
