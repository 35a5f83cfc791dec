/**
 * Runs the real services as child processes for cross-service tests: the same
 * `dist/main.js` that `npm start` and the container run, so tests exercise start-up,
 * readiness, signals and shutdown as deployed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_ARGS } from '@tributary/deploy/service-env';

export type ServiceName = 'ingest' | 'router' | 'dispatcher' | 'retry-scheduler' | 'indexer';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOG_DIR = join(REPO_ROOT, '.tributary', 'test-logs');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningService {
  name: ServiceName;
  port: number;
  url: string;
  process: ChildProcess;
  logFile: string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM and wait for a graceful exit. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL: the crash case. */
  kill(): Promise<number | null>;
}

export interface StartServiceOptions {
  env: Record<string, string>;
  /** Wait for /readyz to answer 200 (default true). */
  waitReady?: boolean;
  /** Node options before the script beside the services' own (SERVICE_NODE_ARGS), such as `--cpu-prof` (which NODE_OPTIONS does not take). */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  /** Listen on this port rather than a free one picked here (when another service must know it first). */
  port?: number;
}

export async function startService(name: ServiceName, options: StartServiceOptions): Promise<RunningService> {
  const port = options.port ?? (await freePort());
  mkdirSync(LOG_DIR, { recursive: true });
  const namespace = options.env.TOPIC_NAMESPACE ?? 'tributary';
  const logFile = join(LOG_DIR, `${namespace}-${name}-${port}.log`);
  const log = createWriteStream(logFile);
  const main = join(REPO_ROOT, 'services', name, 'dist', 'main.js');
  const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, ...(options.nodeArgs ?? []), main], {
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: process.env.TEST_SERVICE_LOG_LEVEL ?? 'info',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      HTTP_HOST: '127.0.0.1',
      ...options.env,
      [name === 'ingest' ? 'INGEST_PORT' : 'HTTP_PORT']: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  exited.then(() => log.end());

  const url = `http://127.0.0.1:${port}`;
  const stopWith = async (signal: NodeJS.Signals, timeoutMs: number) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  const service: RunningService = {
    name,
    port,
    url,
    process: child,
    logFile,
    exited,
    stop: (timeoutMs = 30_000) => stopWith('SIGTERM', timeoutMs),
    kill: () => stopWith('SIGKILL', 5_000),
  };

  if (options.waitReady ?? true) {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it was ready; see ${logFile}`);
      try {
        const response = await fetch(`${url}/readyz`);
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await service.kill();
        throw new Error(`${name} was not ready within ${options.readyTimeoutMs ?? 60_000} ms; see ${logFile}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return service;
}
