import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dockerAvailable, startDockerStack } from './docker-stack.js';
import { readPinnedVersions } from './install.js';
import { resolveCacheDir } from './paths.js';
import { isAlive } from './processes.js';
import { externalStackFromEnv, forcedStackKind } from './stack-choice.js';
import { ensureLocalStack, reapStaleProcesses, type RunningStack } from './stack.js';

export type StackProvider = 'env' | 'docker' | 'local-jvm';

export interface AcquiredStack extends RunningStack {
  provider: StackProvider;
  /** Wall time acquireStack took, downloads included. */
  startupMs: number;
}

export interface AcquireOptions {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  cacheDir?: string;
  /** How long to wait for a Docker engine to answer before falling back to the JVM stack. */
  dockerProbeMs?: number;
}

const OWNER_FILE = 'owner.json';

/**
 * Test stacks from runs that died (killed runner, kill -9): stop their JVMs and delete their
 * data, so they neither hold 9092/8081 nor fill the cache.
 */
async function sweepDeadTestStacks(stacksDir: string, log: (line: string) => void): Promise<void> {
  let names: string[];
  try {
    names = await readdir(stacksDir);
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(stacksDir, name);
    let owner: number | undefined;
    try {
      owner = (JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8')) as { pid?: number }).pid;
    } catch {
      // No owner file yet may be another run between mkdir and writing it; give it a minute.
      const info = await stat(dir).catch(() => null);
      if (info && Date.now() - info.mtimeMs < 60_000) continue;
    }
    if (typeof owner === 'number' && owner !== process.pid && isAlive(owner)) continue;
    await reapStaleProcesses(dir, log);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The test-harness policy: (1) KAFKA_BROKERS + SCHEMA_REGISTRY_URL from the environment;
 * (2) containers when a Docker engine answers; (3) the Maven-fetched JVM stack on loopback
 * in a throwaway data dir (or the one already answering on 9092/8081).
 * TRIBUTARY_STACK=docker|local skips the detection.
 */
export async function acquireStack(opts: AcquireOptions = {}): Promise<AcquiredStack> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => process.stderr.write(`[stack] ${line}\n`));
  const started = Date.now();
  const done = (stack: RunningStack, provider: StackProvider): AcquiredStack => ({
    ...stack,
    stop: () => stack.stop(),
    provider,
    startupMs: Date.now() - started,
  });

  const external = externalStackFromEnv(env);
  if (external) {
    return done({ ...external, startedHere: false, stop: async () => undefined }, 'env');
  }

  const forced = forcedStackKind(env);
  if (forced === 'docker' || (forced !== 'local' && (await dockerAvailable(opts.dockerProbeMs ?? 3_000)))) {
    const versions = await readPinnedVersions(env);
    return done(await startDockerStack(versions, log), 'docker');
  }

  const cacheDir = opts.cacheDir ?? resolveCacheDir(env);
  const stacksDir = join(cacheDir, 'stacks');
  await sweepDeadTestStacks(stacksDir, log);
  const dataDir = join(stacksDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`);
  await mkdir(dataDir, { recursive: true });
  await writeFile(join(dataDir, OWNER_FILE), `${JSON.stringify({ pid: process.pid })}\n`);
  // On failure the data dir stays (the error names log files inside it); the next run sweeps it.
  const stack = await ensureLocalStack({ dataDir, logDir: join(dataDir, 'logs'), fresh: true, cacheDir, env, log });
  if (!stack.startedHere) {
    await rm(dataDir, { recursive: true, force: true });
    return done(stack, 'local-jvm');
  }
  return done(
    {
      ...stack,
      stop: async () => {
        await stack.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    },
    'local-jvm',
  );
}
