/**
 * Runs the real services as child processes for cross-service tests: the same
 * `dist/main.js` that `npm start` and the container run, so tests exercise start-up,
 * readiness, signals and shutdown as deployed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { threadId } from 'node:worker_threads';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_ARGS } from '@tributary/deploy/service-env';

export type ServiceName = 'ingest' | 'router' | 'dispatcher' | 'retry-scheduler' | 'indexer';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOG_DIR = join(REPO_ROOT, '.tributary', 'test-logs');

/**
 * Ports for services, picked below Linux's ephemeral range (32768–60999), which `listen(0)` (the
 * test receivers) and outgoing connections draw from: a port found free here is not handed to one
 * of those in the seconds before the service binds it. Each process (and worker thread) starts at
 * its own place in the range and goes round it, so it hands out no port twice; a port another
 * process took meanwhile shows as EADDRINUSE, and startService tries again on another.
 */
const PORT_RANGE = { first: 20_000, size: 10_000 };
let nextPort = PORT_RANGE.first + ((process.pid * 7_919 + threadId * 104_729) % PORT_RANGE.size);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORT_RANGE.size; tried++) {
    const port = nextPort;
    nextPort = PORT_RANGE.first + ((port - PORT_RANGE.first + 1) % PORT_RANGE.size);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.first}-${PORT_RANGE.first + PORT_RANGE.size - 1}`);
}

/** Starts of a service whose port was taken before it bound it. */
const PORT_TRIES = 3;

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
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(name, options, options.port ?? (await freePort()));
    if (started.kind === 'running') return started.service;
    // A port given by the caller is one another service already knows: not changed here.
    if (options.port !== undefined || attempt >= PORT_TRIES) throw new Error(`${name} could not bind port ${started.port}: address already in use; see ${started.logFile}`);
  }
}

async function startOnce(name: ServiceName, options: StartServiceOptions, port: number): Promise<{ kind: 'running'; service: RunningService } | { kind: 'port taken'; port: number; logFile: string }> {
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
  let portTaken = false;
  const watchForPortTaken = (chunk: Buffer) => {
    if (chunk.includes('EADDRINUSE')) portTaken = true;
  };
  child.stdout.on('data', watchForPortTaken);
  child.stderr.on('data', watchForPortTaken);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  exited.then(() => log.end());
  /** Once its output has been read to the end, too. */
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

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
      if (child.exitCode !== null) {
        await closed;
        if (portTaken) return { kind: 'port taken', port, logFile };
        throw new Error(`${name} exited with ${child.exitCode} before it was ready; see ${logFile}`);
      }
      try {
        const response = await fetch(`${url}/readyz`);
        // Only while the child runs: a 200 from whatever holds a port the child could not bind is not its readiness.
        if (response.status === 200 && child.exitCode === null && !portTaken) break;
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
  return { kind: 'running', service };
}
