import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exitMayBeArchiveFault, planCds, type CdsPlan } from './cds.js';
import { ensureInstalled, type InstalledStack } from './install.js';
import { runCommand } from './java.js';
import { kafkaLoggingConfig, newClusterId, renderServerProperties } from './kafka-config.js';
import { markerFlag, commandLineHasMarker, parsePidFile, renderPidFile, type PidFile } from './pidfile.js';
import { pollUntil } from './poll.js';
import { crashBackoff } from './restart-policy.js';
import {
  isAlive,
  readCommandLine,
  signalGroup,
  spawnDetached,
  stopProcess,
  tailFile,
  type DetachedProcess,
} from './processes.js';
import { kafkaAnswers, portInUse, registryAnswers } from './readiness.js';
import { CCOMPAT_PATH, registrySystemProperties } from './registry-config.js';
import { compareVersions } from './versions.js';

export interface StackEndpoints {
  brokers: string[];
  registryUrl: string;
}

export interface RunningStack extends StackEndpoints {
  startedHere: boolean;
  stop(): Promise<void>;
  /**
   * For fault injection, on a stack started here: stop the broker (SIGTERM, or SIGKILL with
   * `kill`) and start it again on the same data. Undefined on a reused stack.
   */
  broker?: { stop(options?: { kill?: boolean }): Promise<void>; start(): Promise<void> };
  /**
   * For fault injection, on a stack started here: freeze the registry (SIGSTOP) — it keeps its
   * port and takes connections but answers nothing, as a wedged registry or a network that
   * drops packets would — and let it go on (SIGCONT). Undefined on a reused stack.
   */
  registry?: { freeze(): void; thaw(): void };
}

/** Where a stack listens; the default is the one `npm start` and the tests share. */
export interface StackPorts {
  kafka: number;
  controller: number;
  registry: number;
}

export interface LocalStackOptions {
  dataDir: string;
  logDir: string;
  log?: (line: string) => void;
  /** Wipe Kafka's log dir and the registry database before starting. */
  fresh?: boolean;
  cacheDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Per component; default 120 s or TRIBUTARY_STACK_TIMEOUT_MS. */
  readyTimeoutMs?: number;
  /** Other ports than the shared stack's (a private stack for fault injection); such a stack is never reused. */
  ports?: StackPorts;
  /**
   * Once both are up, restart Kafka or the registry when it exits on its own (with the
   * services' back-off, restart-policy.ts), as `npm start` does for the services. Off for the
   * tests: their fault injection stops the broker on purpose, and a crash there should fail
   * the run rather than be papered over.
   */
  supervise?: boolean;
}

export const HOST = '127.0.0.1';
export const KAFKA_PORT = 9092;
export const CONTROLLER_PORT = 9093;
export const REGISTRY_PORT = 8081;
export const DEFAULT_PORTS: StackPorts = { kafka: KAFKA_PORT, controller: CONTROLLER_PORT, registry: REGISTRY_PORT };

export function endpointsOf(ports: StackPorts): StackEndpoints {
  return { brokers: [`${HOST}:${ports.kafka}`], registryUrl: `http://${HOST}:${ports.registry}${CCOMPAT_PATH}` };
}

export const LOCAL_ENDPOINTS: StackEndpoints = endpointsOf(DEFAULT_PORTS);

const PID_FILE = 'stack.pid.json';
const STATE_FILE = 'stack.json';
/** Kafka's controlled shutdown of a combined node takes a few seconds, more with many partitions. */
const KAFKA_GRACE_MS = 30_000;
const REGISTRY_GRACE_MS = 15_000;

const defaultLog = (line: string): void => {
  process.stderr.write(`[stack] ${line}\n`);
};

/** Both halves answer: the stack is usable as is, whoever started it. */
export async function localStackAnswers(endpoints: StackEndpoints = LOCAL_ENDPOINTS, timeoutMs = 2_000): Promise<boolean> {
  const [kafka, registry] = await Promise.all([
    kafkaAnswers(endpoints.brokers, timeoutMs),
    registryAnswers(endpoints.registryUrl, timeoutMs),
  ]);
  return kafka && registry;
}

export async function readStackPidFile(dataDir: string): Promise<PidFile | null> {
  try {
    return parsePidFile(await readFile(join(dataDir, PID_FILE), 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Kills JVMs recorded in `dataDir` whose orchestrator is gone. A live owner means another
 * `npm start`/`stack up` is using them, and they are left alone (and reused).
 */
export async function reapStaleProcesses(dataDir: string, log: (line: string) => void): Promise<void> {
  const recorded = await readStackPidFile(dataDir);
  if (!recorded) return;
  if (recorded.owner !== process.pid && isAlive(recorded.owner)) return;
  for (const p of recorded.processes) {
    if (!isAlive(p.pid)) continue;
    const cmdline = await readCommandLine(p.pid);
    if (cmdline === null || !commandLineHasMarker(cmdline, p.marker)) continue;
    log(`stopping ${p.name} (pid ${p.pid}) left behind by an orchestrator that exited without stopping it`);
    await stopProcess(p.pid, { graceMs: p.name === 'kafka' ? KAFKA_GRACE_MS : REGISTRY_GRACE_MS });
  }
  await rm(join(dataDir, PID_FILE), { force: true });
}

interface StackState {
  kafkaVersion: string;
  apicurioVersion: string;
}

/** Refuses to run an older broker on a log dir a newer one formatted (it would not start). */
async function checkDataCompatibility(dataDir: string, installed: InstalledStack): Promise<void> {
  const file = join(dataDir, STATE_FILE);
  let previous: Partial<StackState> = {};
  try {
    previous = JSON.parse(await readFile(file, 'utf8')) as Partial<StackState>;
  } catch {
    // First start on this data dir.
  }
  if (previous.kafkaVersion && compareVersions(previous.kafkaVersion, installed.kafka.version) > 0) {
    throw new Error(
      `the data in ${dataDir} was written by Kafka ${previous.kafkaVersion}; Kafka ${installed.kafka.version} cannot ` +
        'read it. Reset it with `npm run stack -- reset` (deletes local topics and schemas).',
    );
  }
  const state: StackState = { kafkaVersion: installed.kafka.version, apicurioVersion: installed.apicurio.version };
  await writeFile(file, `${JSON.stringify(state, null, 2)}\n`);
}

async function formatKafkaStorage(
  installed: InstalledStack,
  configDir: string,
  kafkaLogDir: string,
  logFile: string,
  jvmFlags: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  // The same semantics as --ignore-formatted, without depending on that flag's availability.
  if (existsSync(join(kafkaLogDir, 'meta.properties'))) return;
  const clusterId = newClusterId();
  log(`formatting Kafka storage in ${kafkaLogDir} (cluster id ${clusterId})`);
  const result = await runCommand(
    installed.java.command,
    [
      ...jvmFlags,
      '-cp',
      `${installed.kafka.libDir}/*`,
      installed.kafka.storageToolClass,
      'format',
      '-t',
      clusterId,
      '-c',
      join(configDir, 'server.properties'),
    ],
    { env },
  );
  await writeFile(logFile, `\n===== ${new Date().toISOString()} kafka storage format\n${result.output}`, { flag: 'a' });
  if (result.code !== 0) {
    throw new Error(`formatting Kafka storage failed (exit ${result.code}); see ${logFile}:\n${result.output.trim()}`);
  }
}

async function describeFailure(proc: DetachedProcess, what: string, reason: string): Promise<string> {
  return `${what} did not come up: ${reason}. Its log is ${proc.logFile}; last lines:\n${await tailFile(proc.logFile, 25)}`;
}

const execFileAsync = promisify(execFile);

/** How long a stack found half up on our ports gets to finish starting before we give up. */
const STARTING_STACK_WAIT_MS = 90_000;

/** Whether a Kafka or registry JVM started by a Tributary stack (any data dir) is running. */
async function stackProcessRunning(): Promise<boolean> {
  try {
    const { stdout } = await execFileAsync('ps', ['-eo', 'args'], { maxBuffer: 16 * 1024 * 1024 });
    return stdout.includes(markerFlag(''));
  } catch {
    return false;
  }
}

async function answersWithin(timeoutMs: number): Promise<boolean> {
  try {
    return await pollUntil(async () => ((await localStackAnswers()) ? true : undefined), { timeoutMs, intervalMs: 500 });
  } catch {
    return false;
  }
}

/** One of the stack's two JVMs, as started and (when supervised) restarted. */
interface JvmEntry {
  proc: DetachedProcess;
  cds: CdsPlan;
  graceMs: number;
  what: string;
  spawn(cdsFlags: string[]): DetachedProcess;
  answers(): Promise<boolean>;
  startedAt: number;
  crashesInARow: number;
  /** Stopped by fault injection: not a crash to restart after. */
  stoppedOnPurpose: boolean;
}

/**
 * A Kafka broker (KRaft, one combined node) and Apicurio Registry on loopback, started from the
 * Maven-fetched cache, or the ones already answering on 9092/8081.
 */
export async function ensureLocalStack(opts: LocalStackOptions): Promise<RunningStack> {
  const log = opts.log ?? defaultLog;
  const env = opts.env ?? process.env;
  const timeoutMs = opts.readyTimeoutMs ?? (Number(env['TRIBUTARY_STACK_TIMEOUT_MS']) || 120_000);
  await mkdir(opts.dataDir, { recursive: true });
  await mkdir(opts.logDir, { recursive: true });

  await reapStaleProcesses(opts.dataDir, log);

  const ports = opts.ports ?? DEFAULT_PORTS;
  const shared = ports === DEFAULT_PORTS;
  const endpoints = endpointsOf(ports);
  const reuse = (): RunningStack => {
    log(`reusing the Kafka broker on ${HOST}:${KAFKA_PORT} and registry on ${HOST}:${REGISTRY_PORT} that are already running`);
    if (opts.fresh) log('using it as is: "fresh" applies only to a stack started here, so its topics and schemas stay');
    return { ...LOCAL_ENDPOINTS, startedHere: false, stop: async () => undefined };
  };
  if (shared && (await localStackAnswers())) return reuse();
  const taken: Array<readonly [number, string]> = [];
  for (const entry of [
    [ports.kafka, 'Kafka'],
    [ports.controller, 'the Kafka controller'],
    [ports.registry, 'the schema registry'],
  ] as const) {
    if (await portInUse(HOST, entry[0])) taken.push(entry);
  }
  if (taken.length > 0) {
    // Another `npm start` or test run whose stack is still coming up (Kafka recovering a
    // large log dir can take a while): wait for it rather than fail at once.
    if (shared && (await stackProcessRunning())) {
      const waitMs = Math.min(timeoutMs, STARTING_STACK_WAIT_MS);
      log(`${taken.length > 1 ? 'ports' : 'port'} ${taken.map(([port]) => port).join(', ')} on ${HOST} held by a Tributary stack that does not answer yet; waiting up to ${waitMs / 1000} s for it to finish starting`);
      if (await answersWithin(waitMs)) return reuse();
    }
    const [port, what] = taken[0]!;
    throw new Error(
      `port ${port} on ${HOST} (for ${what}) is taken by a program that is not a working Kafka + registry pair. ` +
        'Stop it (e.g. `ss -ltnp | grep ' + port + '`), or point KAFKA_BROKERS and SCHEMA_REGISTRY_URL at your own services.',
    );
  }

  const installed = await ensureInstalled({ cacheDir: opts.cacheDir, env, log });

  const kafkaLogDir = join(opts.dataDir, 'kafka');
  const registryDir = join(opts.dataDir, 'registry');
  const configDir = join(opts.dataDir, 'config');
  if (opts.fresh) {
    await rm(kafkaLogDir, { recursive: true, force: true });
    await rm(registryDir, { recursive: true, force: true });
  }
  await Promise.all([kafkaLogDir, registryDir, configDir].map((d) => mkdir(d, { recursive: true })));
  await checkDataCompatibility(opts.dataDir, installed);

  const logging = kafkaLoggingConfig(installed.kafka.logging);
  const loggingPath = join(configDir, logging.fileName);
  await writeFile(loggingPath, logging.contents);
  await writeFile(
    join(configDir, 'server.properties'),
    renderServerProperties({ host: HOST, port: ports.kafka, controllerPort: ports.controller }, kafkaLogDir),
  );
  const kafkaLogFile = join(opts.logDir, 'kafka.log');
  const registryLogFile = join(opts.logDir, 'registry.log');
  const kafkaClasspath = `${installed.kafka.libDir}/*`;
  const cdsEnabled = env['TRIBUTARY_JVM_CDS'] !== '0';
  const [kafkaCds, registryCds] = await Promise.all([
    planCds({ enabled: cdsEnabled, dir: join(installed.kafka.home, 'cds'), component: 'kafka', java: installed.java, classpath: kafkaClasspath, log }),
    planCds({ enabled: cdsEnabled, dir: join(installed.apicurio.home, 'cds'), component: 'registry', java: installed.java, classpath: installed.apicurio.jar, log }),
  ]);

  const marker = markerFlag(opts.dataDir);
  const started = Date.now();
  const processes: JvmEntry[] = [];
  // Last resort when the orchestrator exits without stop() (process.exit in a signal handler,
  // an uncaught exception): the JVMs live in their own process groups and would outlive it.
  // Only synchronous work is possible here, so they get SIGTERM and shut down on their own.
  const onExit = (): void => {
    for (const { proc } of processes) if (!proc.exitInfo()) signalGroup(proc.pid, 'SIGTERM');
  };
  process.on('exit', onExit);
  const recordPids = (): Promise<void> =>
    writeFile(
      join(opts.dataDir, PID_FILE),
      renderPidFile({ owner: process.pid, processes: processes.map(({ proc }) => ({ name: proc.name, pid: proc.pid, marker })) }),
    );

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // In start order, which puts the registry first: nothing should be left talking to a
      // broker that is going away.
      for (const { proc, cds, graceMs } of processes) {
        const t = Date.now();
        const outcome = await stopProcess(proc.pid, { graceMs, exited: proc.exited });
        if (outcome === 'terminated') await cds.commit();
        else if (outcome === 'not-running') await cds.distrust();
        else await cds.dropPartial();
        if (outcome !== 'not-running') log(`${proc.name} ${outcome} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      }
      await rm(join(opts.dataDir, PID_FILE), { force: true });
      process.off('exit', onExit);
    })();
    return stopping;
  };

  const spawnKafka = (cdsFlags = kafkaCds.flags): DetachedProcess =>
    spawnDetached({
      name: 'kafka',
      command: installed.java.command,
      args: [
        marker,
        '-Xms256m',
        '-Xmx512m',
        '-Djava.awt.headless=true',
        ...cdsFlags,
        logging.jvmFlag(loggingPath),
        '-cp',
        kafkaClasspath,
        installed.kafka.mainClass,
        join(configDir, 'server.properties'),
      ],
      logFile: kafkaLogFile,
      env,
    });
  const spawnRegistry = (cdsFlags = registryCds.flags): DetachedProcess =>
    spawnDetached({
      name: 'registry',
      command: installed.java.command,
      args: [
        marker,
        '-Xms128m',
        '-Xmx512m',
        // C1 only: a local registry serves a handful of lookups (clients cache ids), so the
        // peak-throughput compiler is not worth its start-up CPU on two cores (~1 s).
        '-XX:TieredStopAtLevel=1',
        ...cdsFlags,
        // Its H2 database is in registryDir, so a restarted registry serves the same schema ids.
        ...registrySystemProperties({ host: HOST, port: ports.registry, storageDir: registryDir }),
        '-jar',
        installed.apicurio.jar,
      ],
      cwd: installed.apicurio.home,
      logFile: registryLogFile,
      env,
    });
  const kafkaWhat = `Kafka ${installed.kafka.version}`;
  const registryWhat = `Apicurio Registry ${installed.apicurio.version}`;
  try {
    // The registry keeps its schemas in H2, not in Kafka, so it boots while Kafka's storage is
    // formatted and the broker starts.
    processes.push({
      proc: spawnRegistry(),
      cds: registryCds,
      graceMs: REGISTRY_GRACE_MS,
      what: registryWhat,
      spawn: spawnRegistry,
      answers: () => registryAnswers(endpoints.registryUrl),
      startedAt: Date.now(),
      crashesInARow: 0,
      stoppedOnPurpose: false,
    });
    await recordPids();
    await formatKafkaStorage(installed, configDir, kafkaLogDir, kafkaLogFile, [logging.jvmFlag(loggingPath), ...kafkaCds.readOnlyFlags], env, log);
    processes.push({
      proc: spawnKafka(),
      cds: kafkaCds,
      graceMs: KAFKA_GRACE_MS,
      what: kafkaWhat,
      spawn: spawnKafka,
      answers: () => kafkaAnswers(endpoints.brokers),
      startedAt: Date.now(),
      crashesInARow: 0,
      stoppedOnPurpose: false,
    });
    await recordPids();
  } catch (err) {
    await stop();
    throw err;
  }
  const registryEntry = processes[0]!;
  const kafkaEntry = processes[1]!;

  /** `since`: when the wait's process was started, so that a restart's log says how long the restart took. */
  const waitReady = async (proc: DetachedProcess, what: string, check: () => Promise<boolean>, since = started): Promise<void> => {
    try {
      await pollUntil(async () => ((await check()) ? true : undefined), {
        timeoutMs,
        intervalMs: 200,
        abortReason: () => {
          const info = proc.exitInfo();
          return info ? `the process exited (${info.signal ?? `code ${info.code}`})` : undefined;
        },
      });
      log(`${what} ready in ${((Date.now() - since) / 1000).toFixed(1)} s`);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(await describeFailure(proc, what, reason));
    }
  };

  log(`starting Kafka ${installed.kafka.version} (log: ${kafkaLogFile}) and Apicurio Registry ${installed.apicurio.version} (log: ${registryLogFile})`);
  const results = await Promise.allSettled([
    waitReady(kafkaEntry.proc, kafkaWhat, kafkaEntry.answers),
    waitReady(registryEntry.proc, registryWhat, registryEntry.answers),
  ]);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failures.length > 0) {
    await stop();
    throw new Error(failures.map((f) => (f instanceof Error ? f.message : String(f))).join('\n\n'));
  }

  /** Starts the JVM again on the same data and waits until it answers. */
  const respawn = async (entry: JvmEntry, cdsFlags: string[], how: string): Promise<void> => {
    const restarted = Date.now();
    entry.proc = entry.spawn(cdsFlags);
    entry.startedAt = restarted;
    entry.stoppedOnPurpose = false;
    await recordPids();
    if (opts.supervise) superviseJvm(entry);
    await waitReady(entry.proc, `${entry.what} (${how})`, entry.answers, restarted);
  };

  /**
   * After start-up nobody else watches the JVMs: a broker killed by the OOM killer or a
   * `kill -9` would leave the services retrying against nothing until the run is stopped.
   */
  const superviseJvm = (entry: JvmEntry): void => {
    const proc = entry.proc;
    void proc.exited.then(async (info) => {
      if (stopping || entry.stoppedOnPurpose || entry.proc !== proc) return;
      const backoff = crashBackoff(Date.now() - entry.startedAt, entry.crashesInARow);
      entry.crashesInARow = backoff.crashesInARow;
      log(
        `${entry.what} exited unexpectedly (${info.signal ?? `code ${info.code}`}); restarting it in ` +
          `${(backoff.delayMs / 1000).toFixed(0)} s (crash ${backoff.crashesInARow} in a row). Its log: ${proc.logFile}`,
      );
      // A crash may be the class-data archive's fault (cds.ts): drop it and restart without
      // one. Killed from outside, it keeps mapping the archive, but never records one.
      const suspectArchive = exitMayBeArchiveFault(info);
      await (suspectArchive ? entry.cds.distrust() : entry.cds.dropPartial());
      const cdsFlags = suspectArchive ? [] : entry.cds.readOnlyFlags;
      for (let delayMs = backoff.delayMs; ; ) {
        await new Promise((r) => setTimeout(r, delayMs));
        if (stopping || entry.stoppedOnPurpose || entry.proc !== proc) return;
        try {
          await respawn(entry, cdsFlags, 'restarted');
          return;
        } catch (err) {
          log(err instanceof Error ? err.message : String(err));
          // Spawned: a restart that exits again is handled by its own supervision, a wedged one
          // is only reported. Not spawned at all (java gone, the log file not writable): the
          // JVM would stay down for the rest of the run, so it is tried again.
          if (entry.proc !== proc) return;
          const next = crashBackoff(0, entry.crashesInARow);
          entry.crashesInARow = next.crashesInARow;
          delayMs = next.delayMs;
          log(`${entry.what} could not be started again; trying in ${(delayMs / 1000).toFixed(0)} s`);
        }
      }
    });
  };
  if (opts.supervise) for (const entry of processes) superviseJvm(entry);

  const broker = {
    async stop(options: { kill?: boolean } = {}): Promise<void> {
      const { proc } = kafkaEntry;
      kafkaEntry.stoppedOnPurpose = true;
      if (options.kill) signalGroup(proc.pid, 'SIGKILL');
      await stopProcess(proc.pid, { graceMs: KAFKA_GRACE_MS, exited: proc.exited });
      log(`Kafka ${options.kill ? 'killed' : 'stopped'} (fault injection)`);
    },
    async start(): Promise<void> {
      // Without the class-data archive flags: this start must not record one.
      await respawn(kafkaEntry, kafkaCds.readOnlyFlags, 'restarted');
    },
  };
  const registryFaults = {
    freeze(): void {
      signalGroup(registryEntry.proc.pid, 'SIGSTOP');
      log('registry frozen (fault injection)');
    },
    thaw(): void {
      signalGroup(registryEntry.proc.pid, 'SIGCONT');
      log('registry thawed (fault injection)');
    },
  };
  return { ...endpoints, startedHere: true, stop, broker, registry: registryFaults };
}
