/**
 * Summary of a V8 `.cpuprofile` (written by `node --cpu-prof`): self time per function and
 * per package, optionally only for the samples inside a time window — the profile covers
 * the service's whole life, and the question is where the time goes at the maximum rate.
 *
 * Each sample names the node (function + call site) that was on top of the stack, and counts
 * as one sampling interval (the median gap between samples). Charging a sample the time until
 * the next one instead, as Chrome's DevTools does, measures wall time: on a saturated machine
 * a thread preempted inside a system call (a socket write that wakes the broker) is sampled
 * again only when it runs again, and the whole wait would be charged to that call.
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number; scriptId?: string | number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  /** Microseconds, on the profiled process's monotonic clock. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  /** `name (file:line)` */
  function: string;
  group: string;
  selfMs: number;
  /** Share of the busy (not idle) samples, 0–1. */
  share: number;
}

export interface ProfileSummary {
  /** Samples counted × the sampling interval, ms. */
  totalMs: number;
  /** The same without idle samples: roughly the main thread's CPU time. */
  busyMs: number;
  topFunctions: SelfTime[];
  groups: Array<{ group: string; selfMs: number; share: number }>;
}

/** Where a frame's code comes from: a package, Node itself, V8's pseudo-frames, or ours. */
export function groupOf(url: string, functionName: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8/native (program)';
    return 'V8/native';
  }
  if (url.startsWith('node:')) return 'node core';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packageMatch) return packageMatch[1]!;
  const ours = /\/(services\/[^/]+|shared|schemas)\//.exec(url);
  if (ours) return `tributary ${ours[1]}`;
  return 'other';
}

function frameLabel(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const file = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/(services|shared|schemas)\//, '$1/');
  return `${name} (${file}:${lineNumber + 1})`;
}

/**
 * Self time per function within [fromUs, toUs] (microseconds since the profile's start;
 * the whole profile by default). `(idle)` is counted in the total but never listed.
 */
export function summariseProfile(profile: CpuProfile, options: { fromUs?: number; toUs?: number; top?: number } = {}): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const fromUs = options.fromUs ?? 0;
  const toUs = options.toUs ?? Number.POSITIVE_INFINITY;
  const selfByFunction = new Map<string, { group: string; us: number }>();
  const selfByGroup = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;

  const { samples, timeDeltas } = profile;
  const gaps = timeDeltas.slice(1).sort((a, b) => a - b);
  const interval = gaps[gaps.length >> 1] ?? 0;
  let at = 0;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i] ?? 0;
    if (at < fromUs || at > toUs) continue;
    const node = byId.get(samples[i]!);
    if (!node) continue;
    const group = groupOf(node.callFrame.url, node.callFrame.functionName);
    totalUs += interval;
    if (group === 'idle') {
      idleUs += interval;
      continue;
    }
    const label = frameLabel(node);
    const entry = selfByFunction.get(label) ?? { group, us: 0 };
    entry.us += interval;
    selfByFunction.set(label, entry);
    selfByGroup.set(group, (selfByGroup.get(group) ?? 0) + interval);
  }

  const busyUs = totalUs - idleUs;
  const share = (us: number) => (busyUs === 0 ? 0 : us / busyUs);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    topFunctions: [...selfByFunction]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, options.top ?? 20)
      .map(([fn, { group, us }]) => ({ function: fn, group, selfMs: us / 1000, share: share(us) })),
    groups: [...selfByGroup]
      .sort((a, b) => b[1] - a[1])
      .map(([group, us]) => ({ group, selfMs: us / 1000, share: share(us) })),
  };
}
