import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { checkJava, checkMaven, runCommand, type JavaInfo } from './java.js';
import { pomPath, resolveCacheDir } from './paths.js';
import { pickRegistryJar } from './registry-config.js';
import {
  apicurioDistName,
  apicurioInstallKey,
  kafkaDistName,
  kafkaInstallKey,
  kafkaMavenOverrides,
  parsePomProperties,
  resolveVersions,
  type KafkaDist,
  type PinnedVersions,
} from './versions.js';

/** Written last into a dist dir; a dir without it (or with another key) is not installed. */
export const MARKER_FILE = '.tributary-installed.json';

export interface InstalledStack {
  java: JavaInfo;
  cacheDir: string;
  versions: PinnedVersions;
  kafka: KafkaDist & { home: string; libDir: string };
  apicurio: { version: string; home: string; jar: string };
  /** Milliseconds spent in Maven this call; 0 when everything came from the cache. */
  downloadMs: number;
}

export interface InstallOptions {
  cacheDir?: string;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export async function readPinnedVersions(env: NodeJS.ProcessEnv = process.env): Promise<PinnedVersions> {
  return resolveVersions(parsePomProperties(await readFile(pomPath, 'utf8')), env);
}

async function markerMatches(distDir: string, key: string): Promise<boolean> {
  try {
    const marker = JSON.parse(await readFile(join(distDir, MARKER_FILE), 'utf8')) as { key?: unknown };
    return marker.key === key;
  } catch {
    return false;
  }
}

async function listRelative(root: string, depth: number): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, level: number): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isFile()) out.push(relative(root, full).split('\\').join('/'));
      else if (entry.isDirectory() && level < depth && entry.name !== 'lib') await walk(full, level + 1);
    }
  };
  await walk(root, 0);
  return out;
}

async function findRegistryJar(home: string): Promise<string> {
  const jar = pickRegistryJar(await listRelative(home, 2));
  if (!jar) throw new Error(`no quarkus-run.jar or *-runner.jar in the Apicurio distribution at ${home}`);
  return join(home, jar);
}

/** Temp dirs of installs that crashed midway; anything older than an hour is certainly dead. */
async function sweepStaleTemps(distRoot: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(distRoot);
  } catch {
    return;
  }
  for (const name of entries.filter((n) => n.startsWith('.tmp-'))) {
    const full = join(distRoot, name);
    const info = await stat(full).catch(() => null);
    if (info && Date.now() - info.mtimeMs > 3_600_000) await rm(full, { recursive: true, force: true });
  }
}

/**
 * Moves a completed temp install into place. Another process may have finished the same
 * install meanwhile; then its copy is as good as ours and ours is dropped.
 */
async function commitInstall(tmp: string, finalDir: string, key: string): Promise<void> {
  await writeFile(join(tmp, MARKER_FILE), `${JSON.stringify({ key, installedAt: new Date().toISOString() })}\n`);
  if (existsSync(finalDir) && !(await markerMatches(finalDir, key))) {
    // A dir without our marker is an older version or a pre-marker leftover; never trust it.
    await rm(finalDir, { recursive: true, force: true });
  }
  try {
    await rename(tmp, finalDir);
  } catch (err) {
    if (await markerMatches(finalDir, key)) {
      await rm(tmp, { recursive: true, force: true });
      return;
    }
    throw err;
  }
}

/** Whether Kafka and Apicurio Registry of the pinned versions are in the cache: then no Maven run is needed. */
export async function stackDistsCached(env: NodeJS.ProcessEnv = process.env, cacheDir: string = resolveCacheDir(env)): Promise<boolean> {
  const versions = await readPinnedVersions(env);
  const distRoot = join(cacheDir, 'dist');
  const [kafka, apicurio] = await Promise.all([
    markerMatches(join(distRoot, kafkaDistName(versions.kafka)), kafkaInstallKey(versions.kafka)),
    markerMatches(join(distRoot, apicurioDistName(versions.apicurio)), apicurioInstallKey(versions.apicurio)),
  ]);
  return kafka && apicurio;
}

/**
 * Makes sure Kafka's jars and the Apicurio distribution for the pinned versions are in the
 * cache, fetching only what is missing with one Maven run. Maven writes into temp dirs that
 * are renamed into place after it succeeded, so an interrupted download never leaves a dist
 * that looks complete.
 */
export async function ensureInstalled(opts: InstallOptions = {}): Promise<InstalledStack> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const cacheDir = opts.cacheDir ?? resolveCacheDir(env);
  const versions = await readPinnedVersions(env);
  const java = await checkJava(env);

  const distRoot = join(cacheDir, 'dist');
  const kafkaHome = join(distRoot, kafkaDistName(versions.kafka));
  const apicurioHome = join(distRoot, apicurioDistName(versions.apicurio));
  const kafkaKey = kafkaInstallKey(versions.kafka);
  const apicurioKey = apicurioInstallKey(versions.apicurio);
  const needKafka = !(await markerMatches(kafkaHome, kafkaKey));
  const needApicurio = !(await markerMatches(apicurioHome, apicurioKey));

  let downloadMs = 0;
  if (needKafka || needApicurio) {
    const mvn = await checkMaven(env);
    await mkdir(distRoot, { recursive: true });
    await sweepStaleTemps(distRoot);
    const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
    const kafkaTmp = join(distRoot, `.tmp-${kafkaDistName(versions.kafka)}-${suffix}`);
    const apicurioTmp = join(distRoot, `.tmp-${apicurioDistName(versions.apicurio)}-${suffix}`);
    const args = ['-B', '-q', '-f', pomPath, `-Dmaven.repo.local=${join(cacheDir, 'm2')}`];
    const goals: string[] = [];
    const what: string[] = [];
    if (needKafka) {
      args.push(...kafkaMavenOverrides(versions.kafka), `-Dtributary.kafka.lib=${join(kafkaTmp, 'lib')}`);
      goals.push('dependency:copy-dependencies@kafka-lib');
      what.push(`Kafka ${versions.kafka.version} (~50 MB)`);
    }
    if (needApicurio) {
      args.push(
        `-Dapicurio.version=${versions.apicurio.version}`,
        `-Dapicurio.archive.type=${versions.apicurio.archiveType}`,
        `-Dtributary.apicurio.dir=${apicurioTmp}`,
      );
      goals.push('dependency:unpack@apicurio');
      what.push(`Apicurio Registry ${versions.apicurio.version} (~110 MB)`);
    }
    log(`fetching ${what.join(' and ')} from Maven Central into ${cacheDir} (once per version)…`);
    const started = Date.now();
    try {
      const result = await runCommand(mvn, [...args, ...goals], { env, cwd: cacheDir });
      if (result.code !== 0) {
        throw new Error(
          `Maven failed to fetch ${what.join(' and ')} (exit ${result.code}). Command:\n  ${mvn} ${[...args, ...goals].join(' ')}\n` +
            `Output:\n${result.output.trim().split('\n').slice(-30).join('\n')}`,
        );
      }
      downloadMs = Date.now() - started;
      if (needKafka) {
        const jar = `kafka_${versions.kafka.scalaBinary}-${versions.kafka.version}.jar`;
        if (!existsSync(join(kafkaTmp, 'lib', jar))) throw new Error(`Maven finished but ${jar} is not in ${kafkaTmp}/lib`);
        await commitInstall(kafkaTmp, kafkaHome, kafkaKey);
      }
      if (needApicurio) {
        await findRegistryJar(apicurioTmp);
        await commitInstall(apicurioTmp, apicurioHome, apicurioKey);
      }
    } finally {
      await rm(kafkaTmp, { recursive: true, force: true });
      await rm(apicurioTmp, { recursive: true, force: true });
    }
    log(`fetched in ${(downloadMs / 1000).toFixed(1)} s`);
  }

  return {
    java,
    cacheDir,
    versions,
    kafka: { ...versions.kafka, home: kafkaHome, libDir: join(kafkaHome, 'lib') },
    apicurio: { version: versions.apicurio.version, home: apicurioHome, jar: await findRegistryJar(apicurioHome) },
    downloadMs,
  };
}
