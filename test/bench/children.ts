/**
 * The benchmark's child processes (receiver, load generator, probes: forked by file and
 * steered over IPC) and the CPU and memory accounting of every process in a run. Shared by
 * the throughput run (run.ts) and the noisy-neighbour scenario (noisy-neighbour.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jitSecondsBetween, sampleProcess, type ProcessSample } from './proc.js';
import type { ProcessUsage } from './result.js';

const HERE = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------
// Child processes

export interface Child<R> {
  process: ChildProcess;
  /** The next report of `kind`. */
  next<K extends string>(kind: K, timeoutMs: number): Promise<Extract<R, { kind: K }>>;
}

export function forkChild<R extends { kind: string }>(file: string, env: Record<string, string>, onReport: (report: R) => void = () => undefined): Child<R> {
  const child = fork(join(HERE, file), [], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<string, (report: R) => void>();
  child.on('message', (message: R) => {
    onReport(message);
    const resolve = waiting.get(message.kind);
    if (resolve) {
      waiting.delete(message.kind);
      resolve(message);
    }
  });
  return {
    process: child,
    next: (kind, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${file}: no "${kind}" report within ${timeoutMs} ms`)), timeoutMs);
        const exited = () => reject(new Error(`${file} exited (code ${child.exitCode}) before its "${kind}" report`));
        child.once('exit', exited);
        waiting.set(kind, (report) => {
          clearTimeout(timer);
          child.off('exit', exited);
          resolve(report as Extract<R, { kind: typeof kind }>);
        });
      }),
  };
}

export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/**
 * On SIGINT or SIGTERM, runs `stopAll` (the run's services and children) and exits 130: the
 * services would otherwise outlive the run, riding out the loss of the stack it started.
 */
export function stopOnSignal(say: (line: string) => void, stopAll: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping the services and children`);
      void stopAll()
        .catch(() => undefined)
        .finally(() => process.exit(130));
    });
  }
}

// ---------------------------------------------------------------------------------------
// CPU and memory of every process in the run

export class ProcessTable {
  private readonly tracked: Array<{ name: string; pid: number }> = [];

  add(name: string, pid: number | undefined): void {
    if (pid !== undefined) this.tracked.push({ name, pid });
  }

  snapshot(): Map<string, ProcessSample & { pid: number }> {
    const samples = new Map<string, ProcessSample & { pid: number }>();
    for (const { name, pid } of this.tracked) {
      const sample = sampleProcess(pid);
      if (sample) samples.set(name, { ...sample, pid });
    }
    return samples;
  }

  usage(from: Map<string, ProcessSample & { pid: number }>, to: Map<string, ProcessSample & { pid: number }>, seconds: number, events: number): ProcessUsage[] {
    const usage: ProcessUsage[] = [];
    for (const [name, end] of to) {
      const start = from.get(name);
      if (!start) continue;
      const cpuSeconds = end.cpuSeconds - start.cpuSeconds;
      usage.push({
        name,
        pid: end.pid,
        cpuSeconds,
        systemShare: cpuSeconds > 0 ? (end.systemSeconds - start.systemSeconds) / cpuSeconds : 0,
        corePercent: (cpuSeconds / seconds) * 100,
        cpuMsPer1kEvents: events > 0 ? (cpuSeconds * 1e6) / events : Number.NaN,
        peakRssBytes: end.peakRssBytes,
        ...(end.jitThreads.size > 0 ? { jitCpuSeconds: jitSecondsBetween(start.jitThreads, end.jitThreads) } : {}),
        ...(start.mainThreadSeconds !== undefined && end.mainThreadSeconds !== undefined ? { mainThreadCpuSeconds: end.mainThreadSeconds - start.mainThreadSeconds } : {}),
      });
    }
    return usage;
  }
}

