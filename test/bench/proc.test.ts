import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { isJitCompilerThread, jitSecondsBetween, jvmRole, parseCpuTicks, parseStatusKb, parseStealTicks, sampleProcess } from './proc.js';

describe('/proc parsing', () => {
  it('reads utime and stime after a command name with spaces and parentheses', () => {
    const stat = '4242 (node (worker) x) S 1 4242 4242 0 -1 4194304 5210 0 0 0 1234 567 0 0 20 0 11 0 8850 1179648000 60000';
    expect(parseCpuTicks(stat)).toEqual({ user: 1234, system: 567 });
  });

  it('refuses a line it cannot read', () => {
    expect(() => parseCpuTicks('garbage')).toThrow(/unreadable/);
  });

  it('reads a kB field of /proc/<pid>/status in bytes', () => {
    const status = 'Name:\tjava\nVmPeak:\t 5000000 kB\nVmHWM:\t  750976 kB\nVmRSS:\t  700000 kB\n';
    expect(parseStatusKb(status, 'VmHWM')).toBe(750976 * 1024);
    expect(parseStatusKb(status, 'VmSwap')).toBeUndefined();
  });

  it('reads the steal ticks of /proc/stat\'s "cpu" line, and nothing from any other line', () => {
    expect(parseStealTicks('cpu  949467 133415 211446 2470402 20703 0 20019 1800 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n')).toBe(1800);
    expect(parseStealTicks('cpu0 1 2 3 4 5 6 7 8 0 0\n')).toBeUndefined();
    expect(parseStealTicks('cpu  1 2 3 4\n')).toBeUndefined();
  });

  it("recognises HotSpot's compiler threads by the kernel's 15-character thread name", () => {
    expect(isJitCompilerThread('C2 CompilerThre\n')).toBe(true);
    expect(isJitCompilerThread('C1 CompilerThre')).toBe(true);
    expect(isJitCompilerThread('data-plane-kafk')).toBe(false);
    expect(isJitCompilerThread('G1 Conc#0')).toBe(false);
  });

  it('sums the compiler threads between two samples, a thread started meanwhile from zero', () => {
    const start = new Map([[10, 5], [11, 2]]);
    const end = new Map([[10, 7.5], [11, 2], [12, 0.25]]);
    expect(jitSecondsBetween(start, end)).toBe(2.75);
  });

  it("recognises the stack's JVMs by command line", () => {
    expect(jvmRole('java -Xmx512m -cp /cache/kafka-3.9.1/lib/* kafka.Kafka /data/config/server.properties')).toBe('kafka');
    expect(jvmRole('/usr/lib/jvm/bin/java -Dx=1 -jar /cache/apicurio-3.0.9/apicurio-registry-app-3.0.9-runner.jar')).toBe('registry');
    expect(jvmRole('node services/router/dist/main.js kafka.Kafka')).toBeUndefined();
    expect(jvmRole('java -jar something-else.jar')).toBeUndefined();
  });
});

describe('sampling a live process', () => {
  it("tells the main thread's CPU from the other threads'", { timeout: 30_000 }, async () => {
    const first = sampleProcess(process.pid)!;
    expect(first.mainThreadSeconds).toBeDefined();
    // The main thread spins until the kernel has charged it 150 ms (however busy the machine)…
    let spin = 0;
    const deadline = Date.now() + 20_000;
    while ((sampleProcess(process.pid)!.mainThreadSeconds ?? 0) - first.mainThreadSeconds! < 0.15 && Date.now() < deadline) {
      for (let i = 0; i < 1e5; i++) spin += Math.sqrt(i + spin);
    }
    const spun = sampleProcess(process.pid)!;
    // …then waits while a worker thread spins until the kernel has charged the process 200 ms
    // more — not for a wall-clock time: the suite starts a broker beside this test, and on two
    // busy cores 400 ms of wall time can bring a worker less than the 50 ms asserted below.
    const worker = new Worker(
      'const start = process.cpuUsage(); const deadline = Date.now() + 20000; let x = 0;' +
        ' while (Date.now() < deadline) { const used = process.cpuUsage(start); if (used.user + used.system >= 200000) break;' +
        ' for (let i = 0; i < 1e5; i++) x += Math.sqrt(x + 1); }' +
        ' require("node:worker_threads").parentPort.postMessage(x);',
      { eval: true },
    );
    await once(worker, 'message');
    await worker.terminate();
    const last = sampleProcess(process.pid)!;

    expect(spin).toBeGreaterThan(0);
    const tick = 0.011;
    const mainSpinning = spun.mainThreadSeconds! - first.mainThreadSeconds!;
    expect(mainSpinning).toBeGreaterThanOrEqual(0.15);
    expect(mainSpinning).toBeLessThanOrEqual(spun.cpuSeconds - first.cpuSeconds + tick);
    // The worker's CPU is the process's, not the main thread's.
    const mainWaiting = last.mainThreadSeconds! - spun.mainThreadSeconds!;
    const processWaiting = last.cpuSeconds - spun.cpuSeconds;
    expect(processWaiting - mainWaiting).toBeGreaterThan(0.05);
  });

  it('has nothing to say about a process that is gone', () => {
    expect(sampleProcess(2 ** 22 + 17)).toBeUndefined();
  });
});
