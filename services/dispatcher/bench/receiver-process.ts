/**
 * A webhook receiver in its own process, for the benchmark: the test process also reads
 * the dispatcher's log pipe, and a receiver answering thousands of requests a second in
 * the same event loop would slow that reading down enough to stall the dispatcher's
 * synchronous log writes — measuring the harness instead of the dispatcher. The receiver
 * counts requests and serves its counts at `/__stats` (`/__reset` starts over).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const PROGRAM = `
import { createServer } from 'node:http';
const hang = process.env.RECEIVER_MODE === 'hang';
const delayMs = Number(process.env.RECEIVER_DELAY_MS ?? 0);
let stats = { count: 0, first: 0, last: 0 };
const server = createServer((request, response) => {
  if (request.url === '/__stats') return void response.end(JSON.stringify(stats));
  if (request.url === '/__reset') {
    stats = { count: 0, first: 0, last: 0 };
    return void response.end('{}');
  }
  request.resume();
  request.on('end', () => {
    const now = Date.now();
    stats.count++;
    if (!stats.first) stats.first = now;
    stats.last = now;
    if (hang) return;
    const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

export interface ReceiverStats {
  count: number;
  first: number;
  last: number;
}

export interface ReceiverProcess {
  url(path: string): string;
  stats(): Promise<ReceiverStats>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startReceiverProcess(options: { hang: true } | { answerAfterMs: number }): Promise<ReceiverProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', PROGRAM], {
    env: {
      PATH: process.env.PATH ?? '',
      RECEIVER_MODE: 'hang' in options ? 'hang' : 'answer',
      RECEIVER_DELAY_MS: 'answerAfterMs' in options ? String(options.answerAfterMs) : '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  const base = `http://127.0.0.1:${Number(line)}`;
  return {
    url: (path) => `${base}${path}`,
    stats: async () => (await (await fetch(`${base}/__stats`)).json()) as ReceiverStats,
    reset: async () => void (await fetch(`${base}/__reset`)).body?.cancel(),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
