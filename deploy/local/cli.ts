#!/usr/bin/env node
/** `npm run stack -- <install|up|status|reset>`: the local Kafka + registry on their own. */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { formatSeconds } from './cli-args.js';
import { ensureInstalled, readPinnedVersions } from './install.js';
import { localDataDir, localLogDir, resolveCacheDir } from './paths.js';
import { whenNpmParentGone } from './parent-watch.js';
import { isAlive } from './processes.js';
import { kafkaAnswers, registryAnswers } from './readiness.js';
import { ensureLocalStack, LOCAL_ENDPOINTS, readStackPidFile, reapStaleProcesses } from './stack.js';
import { stopRequestCounter } from './stop-requests.js';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const log = (line: string): void => say(`[stack] ${line}`);

const USAGE = `usage: npm run stack -- <command>
  install   fetch Kafka and Apicurio Registry into the cache (${resolveCacheDir(process.env)})
  up        run Kafka + the schema registry in the foreground until Ctrl-C (data in .tributary/)
  status    show what is installed and running
  reset     delete the local data (topics, offsets, schemas) in ${localDataDir}`;

async function install(): Promise<number> {
  const t = Date.now();
  const installed = await ensureInstalled({ log });
  say(`Kafka ${installed.kafka.version}:             ${installed.kafka.home}`);
  say(`Apicurio Registry ${installed.apicurio.version}: ${installed.apicurio.home}`);
  say(`Java ${installed.java.major} (${installed.java.command})`);
  say(
    installed.downloadMs > 0
      ? `installed in ${formatSeconds(Date.now() - t)} (Maven ${formatSeconds(installed.downloadMs)})`
      : `already installed (checked in ${formatSeconds(Date.now() - t)})`,
  );
  return 0;
}

async function up(): Promise<number> {
  let interrupted = false;
  const stopped = new Promise<void>((resolveStop) => {
    const nextStopRequest = stopRequestCounter();
    const stopOnce = (reason: string): void => {
      interrupted = true;
      say(`${reason}: stopping (again to force)…`);
      resolveStop();
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      const request = nextStopRequest();
      // Forced: the stack's exit hook SIGTERMs the JVMs.
      if (request === 'force') process.exit(130);
      if (request === 'first') stopOnce(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // A closed terminal: without a handler Node dies at once and the JVMs (own process groups) run on.
    process.on('SIGHUP', onSignal);
    // npm passes only SIGINT/SIGTERM on, to the shell running this script, which dies of them
    // without passing them on: an orphaned `stack up` would keep both JVMs running.
    whenNpmParentGone('stack', (parent) => {
      if (!interrupted) stopOnce(`the npm script's shell (pid ${parent}) is gone`);
    });
  });
  // Stdout may be a terminal that has gone away (SIGHUP); stopping must not die of that.
  process.stdout.on('error', () => undefined);
  const t = Date.now();
  const stack = await ensureLocalStack({ dataDir: localDataDir, logDir: localLogDir, log, supervise: true });
  if (!stack.startedHere) {
    say('Kafka and the registry are already running (started by another process); nothing to do.');
    return 0;
  }
  if (!interrupted) {
    say(`up in ${formatSeconds(Date.now() - t)}: KAFKA_BROKERS=${stack.brokers.join(',')} SCHEMA_REGISTRY_URL=${stack.registryUrl}`);
    say(`logs: ${localLogDir}   Ctrl-C to stop`);
  }
  await stopped;
  const s = Date.now();
  await stack.stop();
  say(`stopped in ${formatSeconds(Date.now() - s)}`);
  return 0;
}

async function status(): Promise<number> {
  const versions = await readPinnedVersions();
  const cacheDir = resolveCacheDir(process.env);
  say(`cache:    ${cacheDir}`);
  say(`pinned:   Kafka ${versions.kafka.version}, Apicurio Registry ${versions.apicurio.version}`);
  const [kafka, registry] = await Promise.all([
    kafkaAnswers(LOCAL_ENDPOINTS.brokers, 2_000),
    registryAnswers(LOCAL_ENDPOINTS.registryUrl, 2_000),
  ]);
  say(`kafka:    ${LOCAL_ENDPOINTS.brokers.join(',')} ${kafka ? 'answering' : 'not answering'}`);
  say(`registry: ${LOCAL_ENDPOINTS.registryUrl} ${registry ? 'answering' : 'not answering'}`);
  const recorded = await readStackPidFile(localDataDir);
  if (recorded) {
    const owner = isAlive(recorded.owner) ? `owned by pid ${recorded.owner}` : `owner ${recorded.owner} is gone (stale; the next start cleans up)`;
    const procs = recorded.processes.map((p) => `${p.name} pid ${p.pid} ${isAlive(p.pid) ? 'alive' : 'dead'}`).join(', ');
    say(`local:    ${procs}; ${owner}`);
  }
  say(`data:     ${localDataDir}${existsSync(localDataDir) ? '' : ' (none yet)'}`);
  say(`logs:     ${localLogDir}`);
  return kafka && registry ? 0 : 1;
}

async function reset(): Promise<number> {
  const recorded = await readStackPidFile(localDataDir);
  const running = recorded?.processes.filter((p) => isAlive(p.pid)) ?? [];
  if (running.length > 0 && recorded && isAlive(recorded.owner)) {
    say(`the local stack is running (pid ${recorded.owner}); stop it first (Ctrl-C in its terminal)`);
    return 1;
  }
  if (running.length > 0) {
    // Stale JVMs of a crashed run still have the files open; the next ensureLocalStack reaps them.
    await reapStaleProcesses(localDataDir, log);
  }
  await rm(localDataDir, { recursive: true, force: true });
  say(`deleted ${localDataDir}`);
  return 0;
}

async function main(): Promise<number> {
  const command = process.argv[2];
  switch (command) {
    case 'install':
      return install();
    case 'up':
      return up();
    case 'status':
      return status();
    case 'reset':
      return reset();
    default:
      say(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
