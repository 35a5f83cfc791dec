/**
 * CPU time and peak memory of the processes in the run, from Linux's /proc: utime and stime
 * of /proc/<pid>/stat (user and kernel CPU, in clock ticks) and VmHWM of
 * /proc/<pid>/status (the resident set's high-water mark over the process's life).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * utime (user) and stime (kernel) in ticks. The command name may contain spaces and
 * parentheses, so fields are counted after its last ")".
 */
export function parseCpuTicks(stat: string): { user: number; system: number } {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3 of the man page, utime 14, stime 15.
  const user = Number(rest[11]);
  const system = Number(rest[12]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) throw new Error(`unreadable /proc stat line: ${stat.slice(0, 80)}`);
  return { user, system };
}

/** A "Name:   value kB" line of /proc/<pid>/status, in bytes; undefined when absent. */
export function parseStatusKb(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  return match ? Number(match[1]) * 1024 : undefined;
}

/**
 * The machine's steal time in ticks, from the first ("cpu") line of /proc/stat: the time a
 * virtual machine's CPUs were runnable but the hypervisor ran something else. Field 8 after
 * the label; undefined where the kernel does not report it.
 */
export function parseStealTicks(stat: string): number | undefined {
  const line = stat.split('\n', 1)[0] ?? '';
  if (!line.startsWith('cpu ')) return undefined;
  const steal = Number(line.trim().split(/\s+/)[8]);
  return Number.isFinite(steal) ? steal : undefined;
}

/** Steal time of the whole machine so far, CPU seconds (all CPUs together); undefined when unreadable. */
export function hostStealSeconds(): number | undefined {
  try {
    const ticks = parseStealTicks(readFileSync('/proc/stat', 'utf8'));
    return ticks === undefined ? undefined : ticks / clockTicks();
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

export interface ProcessSample {
  cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel (system calls: sockets, files). */
  systemSeconds: number;
  peakRssBytes: number | undefined;
  /** CPU seconds of each HotSpot JIT compiler thread, by thread id (empty for a process that has none). */
  jitThreads: Map<number, number>;
  /**
   * CPU seconds of the process's main thread (the task whose id is the pid). In a Node process
   * that is JavaScript and the event loop, all a CPU profile sees; the rest of cpuSeconds is
   * V8's concurrent marking, sweeping and compiling and libuv's pool — where the full collections
   * of the night of 27 November hid. undefined when the thread could not be read.
   */
  mainThreadSeconds: number | undefined;
}

/**
 * HotSpot names its compiler threads "C1 CompilerThread0", "C2 CompilerThread1" … (the kernel
 * keeps 15 characters). A JVM a few minutes old spends much of its CPU in them — the broker of
 * a bench run, which starts its own stack, above all — which a long-running one no longer does.
 */
export function isJitCompilerThread(comm: string): boolean {
  return /^C[12] CompilerThre/.test(comm.trim());
}

function jitThreads(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      if (!isJitCompilerThread(readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8'))) continue;
      const { user, system } = parseCpuTicks(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      threads.set(Number(tid), (user + system) / clockTicks());
    } catch {
      // The thread ended meanwhile (HotSpot starts and stops compiler threads as its queue needs).
    }
  }
  return threads;
}

/**
 * CPU seconds the JIT compiler threads spent between two samples: threads started meanwhile
 * count from zero; a thread that ended meanwhile takes its share with it, so this is a lower
 * bound when HotSpot stopped one (on two cores it runs one of each kind and keeps them).
 */
export function jitSecondsBetween(start: Map<number, number>, end: Map<number, number>): number {
  let seconds = 0;
  for (const [tid, cpu] of end) seconds += Math.max(0, cpu - (start.get(tid) ?? 0));
  return seconds;
}

function mainThreadSeconds(pid: number): number | undefined {
  try {
    const { user, system } = parseCpuTicks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
    return (user + system) / clockTicks();
  } catch {
    return undefined;
  }
}

/** undefined when the process is gone. */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    const { user, system } = parseCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return {
      cpuSeconds: (user + system) / clockTicks(),
      systemSeconds: system / clockTicks(),
      peakRssBytes: parseStatusKb(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmHWM'),
      jitThreads: jitThreads(pid),
      mainThreadSeconds: mainThreadSeconds(pid),
    };
  } catch {
    return undefined;
  }
}

export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

export type JvmRole = 'kafka' | 'registry';

/** Which of the stack's JVMs a command line belongs to, if any. */
export function jvmRole(cmdline: string): JvmRole | undefined {
  if (!/\bjava\b/.test(cmdline.split(' ')[0] ?? '')) return undefined;
  if (/ kafka\.Kafka /.test(`${cmdline} `)) return 'kafka';
  if (/apicurio-registry/.test(cmdline)) return 'registry';
  return undefined;
}

/**
 * The Kafka broker's and the registry's JVMs on this host, found by command line (the stack
 * may have been started by another process, or in containers whose processes the host sees).
 */
export function findStackJvms(): Array<{ role: JvmRole; pid: number; cmdline: string }> {
  const found: Array<{ role: JvmRole; pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = commandLine(Number(entry));
    const role = cmdline ? jvmRole(cmdline) : undefined;
    if (role && cmdline) found.push({ role, pid: Number(entry), cmdline });
  }
  return found;
}
