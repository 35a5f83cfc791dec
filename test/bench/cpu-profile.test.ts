import { describe, expect, it } from 'vitest';
import { groupOf, summariseProfile, type CpuProfile } from './cpu-profile.js';

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({ id, callFrame: { functionName, url, lineNumber, columnNumber: 0 } });

/**
 * Samples 1 ms apart at 0…9 ms — encode, encode, GC, idle, encode, render, idle, GC, encode,
 * idle — then, after a 100 ms gap (the thread preempted), encode, encode, writeSync, encode.
 */
function profile(): CpuProfile {
  const nodes = [
    frame(1, '(root)', ''),
    frame(2, 'encode', 'file:///repo/node_modules/kafkajs/src/protocol/encoder.js', 40),
    frame(3, '(garbage collector)', ''),
    frame(4, '(idle)', ''),
    frame(5, 'renderBody', 'file:///repo/services/router/dist/render.js', 9),
    frame(6, 'writeSync', 'node:fs', 900),
  ];
  const samples = [2, 2, 3, 4, 2, 5, 4, 3, 2, 4, 2, 2, 6, 2];
  const timeDeltas = [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 100_000, 1000, 1000, 1000];
  return { nodes, startTime: 5_000_000, endTime: 5_200_000, samples, timeDeltas };
}

describe('summariseProfile', () => {
  it('counts each sample in the window as one sampling interval and ranks functions by self time', () => {
    const summary = summariseProfile(profile(), { fromUs: 0, toUs: 20_000 });
    expect(summary.totalMs).toBe(10);
    expect(summary.busyMs).toBe(7);
    expect(summary.topFunctions).toEqual([
      { function: 'encode (kafkajs/src/protocol/encoder.js:41)', group: 'kafkajs', selfMs: 4, share: 4 / 7 },
      { function: '(garbage collector)', group: 'GC', selfMs: 2, share: 2 / 7 },
      { function: 'renderBody (services/router/dist/render.js:10)', group: 'tributary services/router', selfMs: 1, share: 1 / 7 },
    ]);
    expect(summary.groups.map((g) => [g.group, g.selfMs])).toEqual([
      ['kafkajs', 4],
      ['GC', 2],
      ['tributary services/router', 1],
    ]);
  });

  it('does not charge a preemption to the frame sampled before it', () => {
    // The idle sample at 9 ms is followed by a 100 ms gap: it still counts one interval.
    const summary = summariseProfile(profile());
    expect(summary.totalMs).toBe(14);
    expect(summary.busyMs).toBe(11);
  });

  it('limits the list to `top`', () => {
    const summary = summariseProfile(profile(), { top: 1 });
    expect(summary.topFunctions).toEqual([{ function: 'encode (kafkajs/src/protocol/encoder.js:41)', group: 'kafkajs', selfMs: 7, share: 7 / 11 }]);
    expect(summary.groups.find((g) => g.group === 'node core')?.selfMs).toBe(1);
  });

  it('summarises an empty window as zero without dividing by it', () => {
    const summary = summariseProfile(profile(), { fromUs: 1_000_000, toUs: 2_000_000 });
    expect(summary).toEqual({ totalMs: 0, busyMs: 0, topFunctions: [], groups: [] });
  });
});

describe('groupOf', () => {
  it('tells packages, Node, V8 and our workspaces apart', () => {
    expect(groupOf('file:///work/main/node_modules/@kafkajs/confluent-schema-registry/dist/x.js', 'f')).toBe('@kafkajs/confluent-schema-registry');
    expect(groupOf('file:///work/main/node_modules/avsc/lib/types.js', 'f')).toBe('avsc');
    expect(groupOf('node:internal/streams/writable', 'f')).toBe('node core');
    expect(groupOf('file:///work/main/shared/dist/kafka.js', 'f')).toBe('tributary shared');
    expect(groupOf('file:///work/main/services/dispatcher/dist/dispatcher.js', 'f')).toBe('tributary services/dispatcher');
    expect(groupOf('', '(program)')).toBe('V8/native (program)');
    expect(groupOf('', '(garbage collector)')).toBe('GC');
    expect(groupOf('', 'writev')).toBe('V8/native');
  });
});
