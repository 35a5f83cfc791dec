import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// Run in a child process: niceness cannot be raised back without privileges, so lowering the
// test worker's own would slow every test after this one. The child loads the built module
// (`npm test` builds first): plain node cannot load the TypeScript source.
const BUILT = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cpu-priority.js')).href;

interface ChildReport {
  returned: number;
  threads: number[];
  laterThread: number;
  lines: string[];
}

function runChild(nice: number, startedAt = 0): ChildReport {
  const script = `
    import { readdirSync } from 'node:fs';
    import { getPriority } from 'node:os';
    import { Worker } from 'node:worker_threads';
    const { lowerPriority } = await import(${JSON.stringify(BUILT)});
    const lines = [];
    const logger = { info: (_fields, text) => lines.push(text), warn: (_fields, text) => lines.push(text) };
    const returned = lowerPriority(${nice}, 'TEST_NICE', logger);
    const threads = readdirSync('/proc/self/task').map(Number).map((tid) => getPriority(tid));
    const worker = new Worker('Promise.all([import("node:worker_threads"), import("node:os")]).then(([threads, os]) => threads.parentPort.postMessage(os.getPriority()))', { eval: true });
    const laterThread = await new Promise((resolve) => worker.once('message', resolve));
    await worker.terminate();
    process.stdout.write(JSON.stringify({ returned, threads, laterThread, lines }));
  `;
  const [command, args] = startedAt > 0 ? ['nice', ['-n', String(startedAt), process.execPath]] : [process.execPath, []];
  const result = spawnSync(command, [...args, '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as ChildReport;
}

describe('lowerPriority', () => {
  it('sets every thread of the process, and threads started later inherit it', () => {
    const report = runChild(7);
    expect(report.returned).toBe(7);
    expect(report.threads.length).toBeGreaterThan(1);
    expect(new Set(report.threads)).toEqual(new Set([7]));
    expect(report.laterThread).toBe(7);
    expect(report.lines).toEqual(['running at a lower CPU priority than the delivery path (TEST_NICE)']);
  });

  it('leaves the process as started at 0, and never raises a priority already lower', () => {
    const unchanged = runChild(0);
    expect(unchanged.returned).toBe(0);
    expect(new Set(unchanged.threads)).toEqual(new Set([0]));
    expect(unchanged.lines).toEqual([]);

    const already = runChild(5, 12);
    expect(already.returned).toBe(12);
    expect(new Set(already.threads)).toEqual(new Set([12]));
  });
});
