#!/usr/bin/env node
/**
 * `npm start`: the whole pipeline in the foreground — the local Kafka + registry (persistent
 * in .tributary/), the five services, and a demo webhook receiver — until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { formatSeconds } from './cli-args.js';
import { startDemoReceiver, type DemoReceiver } from './demo-receiver.js';
import { dockerAvailable, startDockerStack } from './docker-stack.js';
import { readPinnedVersions, stackDistsCached } from './install.js';
import { acquireInstanceLock, AlreadyRunningError, isStartProcess } from './instance-lock.js';
import { checkJava, checkMaven } from './java.js';
import { LinePrefixer, prefixesFor } from './lines.js';
import { whenNpmParentGone } from './parent-watch.js';
import { localDataDir, localLogDir, repoRoot } from './paths.js';
import { commandLineHasMarker, parsePidFile, renderPidFile } from './pidfile.js';
import { portsNpmStartNeeds, portsTakenMessage, takenPorts } from './port-check.js';
import { afterExit } from './restart-policy.js';
import { isAlive, readCommandLine, signalGroup, stopProcess, type ExitInfo } from './processes.js';
import { waitForServices } from './service-readiness.js';
import { chooseStartStack, withoutCredentials } from './stack-choice.js';
import { ensureLocalStack, type RunningStack, type StackEndpoints } from './stack.js';
import { stopRequestCounter } from './stop-requests.js';
import { localSettings, OPS_PORTS, readinessUrl, SERVICE_NODE_ARGS, serviceEnv, serviceHost, SERVICES, type LocalSettings, type ServiceName } from './service-env.js';

const DEMO_SECRET = 'local-demo-secret';
const DEMO_PORT = 8090;
/** A little above the services' own SHUTDOWN_TIMEOUT default (30 s), so they get to finish. */
const SERVICE_GRACE_MS = 35_000;
const SERVICES_PID_FILE = join(localDataDir, 'services.pid.json');
/** Outside the data dir, which `npm run stack -- reset` deletes. */
const START_LOCK_FILE = join(repoRoot, '.tributary', 'start.pid');
/** How long a Docker engine gets to answer when there is no JDK. */
const DOCKER_PROBE_MS = 3_000;

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const say = (line: string): void => out(`[start] ${line}`);

interface RunningService {
  name: ServiceName;
  pid: number;
  exited: Promise<ExitInfo>;
  done: boolean;
  startedAt: number;
}

/** Services a crashed `npm start` left behind would hold the ports; stop them first. */
async function reapStaleServices(): Promise<void> {
  let recorded;
  try {
    recorded = parsePidFile(await readFile(SERVICES_PID_FILE, 'utf8'));
  } catch {
    return;
  }
  if (!recorded) return;
  // A live pid alone proves nothing: the owner may have died and its pid been reused.
  if (recorded.owner !== process.pid && (await isStartProcess(recorded.owner))) throw new AlreadyRunningError(recorded.owner);
  for (const p of recorded.processes) {
    const cmdline = isAlive(p.pid) ? await readCommandLine(p.pid) : null;
    if (cmdline && commandLineHasMarker(cmdline, p.marker)) {
      say(`stopping ${p.name} (pid ${p.pid}) left behind by an earlier run`);
      await stopProcess(p.pid, { graceMs: SERVICE_GRACE_MS });
    }
  }
  await rm(SERVICES_PID_FILE, { force: true });
}

function spawnService(name: ServiceName, entry: string, env: NodeJS.ProcessEnv, prefix: string): RunningService {
  // Own process group, like the JVMs: the services treat a second signal as "exit now", and a
  // terminal Ctrl-C would otherwise hit them at the same moment as our SIGTERM.
  const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, entry], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const stdout = new LinePrefixer(prefix, (l) => process.stdout.write(l));
  const stderr = new LinePrefixer(prefix, (l) => process.stderr.write(l));
  child.stdout.setEncoding('utf8').on('data', (c: string) => stdout.push(c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
  const service: RunningService = {
    name,
    pid: child.pid,
    done: false,
    startedAt: Date.now(),
    exited: new Promise((resolveExit) => {
      // 'close' (not 'exit'): all output has been printed by then.
      child.once('close', (code, signal) => {
        stdout.flush();
        stderr.flush();
        service.done = true;
        resolveExit({ code, signal });
      });
    }),
  };
  return service;
}

interface StackShown extends StackEndpoints {
  /** Said next to Kafka's address, e.g. that a Docker stack's data goes when the run stops. */
  note?: string;
}

function banner(stack: StackShown, settings: LocalSettings, receiver: DemoReceiver | undefined, notReady: ServiceName[]): string {
  const registryRoot = withoutCredentials(stack.registryUrl);
  return [
    '',
    notReady.length === 0
      ? '  Tributary is running'
      : `  Tributary is up, but not ready yet: ${notReady.join(', ')} (see their output above; crashed services are restarted)`,
    `    ingest API        http://127.0.0.1:${settings.ingestPort}   (write key of the demo source: see ${settings.configPath})`,
    `    admin API         http://127.0.0.1:${settings.ingestPort}/admin/v1   Authorization: Bearer ${settings.adminToken}`,
    `    web console       http://127.0.0.1:${settings.ingestPort}/console/   (sign in with the admin token)`,
    `    delivery log      ${process.env['DELIVERY_LOG_DATABASE_URL'] ? 'PostgreSQL at DELIVERY_LOG_DATABASE_URL' : `embedded PGlite in ${settings.deliveryLogDir}`} (indexer: http://127.0.0.1:${OPS_PORTS.indexer}/metrics)`,
    `    schema registry   ${registryRoot}/subjects`,
    `    Kafka             ${stack.brokers.join(',')}${stack.note ? `   (${stack.note})` : ''}`,
    `    demo receiver     ${receiver ? receiver.url : '(not running)'}`,
    '    try:  curl -u wk_local_demo: -H "content-type: application/json" \\',
    `            -d '{"userId":"u1","event":"Signed Up"}' http://127.0.0.1:${settings.ingestPort}/v1/track`,
    '  Ctrl-C stops everything.',
    '',
  ].join('\n');
}

/** Why the JVM stack cannot run here, or null when a JDK 17+ is found. */
async function javaProblem(): Promise<string | null> {
  try {
    await checkJava(process.env);
    // A first run fetches Kafka and the registry with Maven: without it the JVM stack cannot
    // start either, and Docker, when there, is the way that works.
    if (!(await stackDistsCached(process.env))) await checkMaven(process.env);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

async function main(): Promise<number> {
  // Once the terminal is gone (SIGHUP), writing to it fails; the shutdown must not die of that.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  // First of all: a second run must not get as far as the ports while the first starts the stack.
  const lock = await acquireInstanceLock(START_LOCK_FILE);
  process.on('exit', () => lock.release());

  const settings = localSettings(process.env, join(repoRoot, 'deploy', 'local', 'tributary.yaml'), (p) => resolve(p), localDataDir);
  const entries = new Map(SERVICES.map((name) => [name, join(repoRoot, 'services', name, 'dist', 'main.js')]));
  const missing = [...entries].filter(([, path]) => !existsSync(path));
  if (missing.length > 0) {
    throw new Error(
      `not built: ${missing.map(([, p]) => p).join(', ')}. Run \`npm run build\` (npm start does it for you).`,
    );
  }
  if (!existsSync(settings.configPath)) throw new Error(`TRIBUTARY_CONFIG points at a missing file: ${settings.configPath}`);
  say(`admin token: ${settings.adminToken}   config: ${settings.configPath}`);

  let stack: StackShown & RunningStack | undefined;
  let receiver: DemoReceiver | undefined;
  const services: RunningService[] = [];
  let shuttingDown: Promise<number> | undefined;

  const shutdown = (exitCode: number): Promise<number> => {
    shuttingDown ??= (async () => {
      const t = Date.now();
      say('stopping services…');
      await Promise.all(
        services.map(async (s) => {
          if (s.done) return;
          const outcome = await stopProcess(s.pid, { graceMs: SERVICE_GRACE_MS, exited: s.exited });
          if (outcome === 'killed') say(`${s.name} did not stop within ${SERVICE_GRACE_MS / 1000} s and was killed`);
        }),
      );
      await rm(SERVICES_PID_FILE, { force: true });
      await receiver?.close();
      if (stack) {
        say(stack.startedHere ? 'stopping Kafka and the schema registry…' : 'leaving the stack running (it was not started here)');
        await stack.stop();
      }
      say(`stopped in ${formatSeconds(Date.now() - t)}`);
      return exitCode;
    })();
    return shuttingDown;
  };

  let interrupted = false;
  const nextStopRequest = stopRequestCounter();
  const requestStop = (reason: string): void => {
    interrupted = true;
    say(`${reason}: shutting down (a second Ctrl-C, a moment later, forces it)`);
    if (stack) void shutdown(0).then((code) => process.exit(code));
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    const request = nextStopRequest();
    if (request === 'duplicate') return;
    if (request === 'force') {
      say(`${signal} again: killing everything now`);
      for (const s of services) if (!s.done) signalGroup(s.pid, 'SIGKILL');
      // The stack's exit hook SIGTERMs the JVMs.
      process.exit(130);
    }
    requestStop(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal or ssh session: without a handler Node would die at once and leave the
  // services and JVMs (in their own process groups) running.
  process.on('SIGHUP', onSignal);
  whenNpmParentGone('start', (npmPid) => {
    if (!interrupted) requestStop(`npm (pid ${npmPid}) is gone`);
  });
  // Last resort on a crash: the detached services would outlive us otherwise.
  process.on('exit', () => {
    for (const s of services) if (!s.done) signalGroup(s.pid, 'SIGTERM');
  });

  await reapStaleServices();
  // Before the stack: a port held by someone else is the user's to free, and saying so at once
  // beats services that crash-loop on it after a minute of start-up.
  const taken = await takenPorts(portsNpmStartNeeds(settings, serviceHost(process.env), DEMO_PORT));
  if (taken.length > 0) throw new Error(portsTakenMessage(taken));
  if (interrupted) return shutdown(0);

  const t0 = Date.now();
  const choice = await chooseStartStack(process.env, {
    javaProblem,
    dockerAnswers: () => dockerAvailable(DOCKER_PROBE_MS),
  });
  const stackLog = (line: string): void => out(`[stack] ${line}`);
  if (choice.kind === 'env') {
    say(`using KAFKA_BROKERS=${choice.endpoints.brokers.join(',')} and SCHEMA_REGISTRY_URL=${withoutCredentials(choice.endpoints.registryUrl)} from the environment`);
    stack = { ...choice.endpoints, startedHere: false, stop: async () => undefined };
  } else if (choice.kind === 'docker') {
    // Both containers' storage lives and dies with them (docker-stack.ts).
    const note = 'Docker: topics and schemas are not kept, they go when this run stops';
    say(`starting Kafka and the schema registry with Docker (${choice.why}); their topics and schemas are not kept across runs`);
    const docker = await startDockerStack(await readPinnedVersions(process.env), stackLog).catch((err: unknown) => {
      throw new Error(`the Docker stack could not be started: ${err instanceof Error ? err.message : String(err)}`);
    });
    stack = { ...docker, note };
    say(`Kafka and the schema registry started with Docker in ${formatSeconds(Date.now() - t0)}`);
  } else {
    // Supervised: Kafka or the registry dying later is restarted as a service would be.
    stack = await ensureLocalStack({ dataDir: localDataDir, logDir: localLogDir, log: stackLog, supervise: true });
    say(`Kafka and the schema registry ${stack.startedHere ? 'started' : 'found running'} in ${formatSeconds(Date.now() - t0)} (data: ${localDataDir}, logs: ${localLogDir})`);
  }
  if (interrupted) return shutdown(0);

  try {
    receiver = await startDemoReceiver({
      host: '127.0.0.1',
      port: DEMO_PORT,
      path: '/hooks',
      secret: DEMO_SECRET,
      log: (line) => out(`[receiver] ${line}`),
    });
  } catch (err) {
    say(`demo receiver not started (${err instanceof Error ? err.message : String(err)}); deliveries to it will fail and be retried`);
  }

  const prefixes = prefixesFor([...SERVICES, 'receiver']);
  await mkdir(localDataDir, { recursive: true });
  const recordPids = () =>
    writeFile(SERVICES_PID_FILE, renderPidFile({ owner: process.pid, processes: services.map((s) => ({ name: s.name, pid: s.pid, marker: entries.get(s.name) ?? '' })) }));
  const crashes = new Map<ServiceName, number>();
  // A service ending on its own is started again, as Kubernetes would (restart-policy.ts):
  // nothing is lost meanwhile — what it had not committed is read again — and the others go
  // on. Only invalid settings (the environment or the config file), which no restart fixes,
  // end the run.
  const supervise = (index: number): void => {
    const service = services[index]!;
    void service.exited.then((info) => {
      if (shuttingDown) return;
      const decision = afterExit(info.code, Date.now() - service.startedAt, crashes.get(service.name) ?? 0);
      const how = info.signal ?? `code ${info.code}`;
      if (decision.kind === 'stop') {
        say(`${service.name} exited (${how}): ${decision.reason}; shutting everything down`);
        void shutdown(1).then((code) => process.exit(code));
        return;
      }
      crashes.set(service.name, decision.crashesInARow);
      say(`${service.name} exited unexpectedly (${how}); restarting it in ${formatSeconds(decision.delayMs)} (crash ${decision.crashesInARow} in a row)`);
      setTimeout(() => {
        if (shuttingDown) return;
        const entry = entries.get(service.name) ?? '';
        services[index] = spawnService(service.name, entry, serviceEnv(service.name, process.env, stack!, settings), prefixes.get(service.name) ?? `[${service.name}] `);
        void recordPids();
        supervise(index);
      }, decision.delayMs);
    });
  };
  for (const name of SERVICES) {
    const entry = entries.get(name) ?? '';
    services.push(spawnService(name, entry, serviceEnv(name, process.env, stack, settings), prefixes.get(name) ?? `[${name}] `));
  }
  await recordPids();
  services.forEach((_service, index) => supervise(index));

  const notReady = await waitForServices({
    names: SERVICES,
    // `services` holds whichever child runs each service now: supervise() replaces crashed ones.
    current: (name) => services[SERVICES.indexOf(name)],
    isReady: async (name) => {
      const res = await fetch(readinessUrl(name, settings), { signal: AbortSignal.timeout(1_000) });
      await res.body?.cancel();
      return res.ok;
    },
    stopping: () => shuttingDown !== undefined,
    timeoutMs: 90_000,
    intervalMs: 500,
  });
  if (shuttingDown) return shuttingDown;
  out(banner(stack, settings, receiver, notReady));
  // From here on, signals (or invalid settings) end the process.
  return new Promise<number>(() => undefined);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[start] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
