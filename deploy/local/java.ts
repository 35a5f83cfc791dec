import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Apicurio Registry 3.0 needs 17 (Kafka 3.9 itself would run on 11). */
export const MIN_JAVA_MAJOR = 17;

/**
 * Major version from `java -version` output: `openjdk version "17.0.15"`, `"21"`, `"22-ea"`,
 * or the pre-9 scheme `java version "1.8.0_292"` (which means 8).
 */
export function parseJavaMajor(output: string): number | null {
  const m = /version "([^"]+)"/.exec(output);
  if (!m?.[1]) return null;
  const parts = m[1].split(/[.\-+_]/);
  const first = Number.parseInt(parts[0] ?? '', 10);
  if (Number.isNaN(first)) return null;
  if (first === 1) {
    const second = Number.parseInt(parts[1] ?? '', 10);
    return Number.isNaN(second) ? null : second;
  }
  return first;
}

/** JAVA_HOME wins when it holds a java, like Maven decides; otherwise `java` from PATH. */
export function javaCommand(env: NodeJS.ProcessEnv, exists: (p: string) => boolean = existsSync): string {
  const home = env['JAVA_HOME'];
  if (home) {
    const candidate = join(home, 'bin', 'java');
    if (exists(candidate)) return candidate;
  }
  return 'java';
}

/** Identifies one JVM build; class-data archives are only valid for the build that wrote them. */
export function javaFingerprint(command: string, versionOutput: string): string {
  return createHash('sha1').update(command).update('\0').update(versionOutput.trim()).digest('hex').slice(0, 10);
}

export interface CommandResult {
  code: number | null;
  output: string;
  /** Set when the program could not be started at all (ENOENT: not installed). */
  spawnError?: NodeJS.ErrnoException;
}

export function runCommand(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    let output = '';
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => resolvePromise({ code: null, output, spawnError: err }));
    child.on('close', (code) => resolvePromise({ code, output }));
  });
}

export interface JavaInfo {
  command: string;
  major: number;
  /** Identifies the exact JVM build (class-data archives are only valid for it). */
  fingerprint: string;
}

export async function checkJava(env: NodeJS.ProcessEnv = process.env): Promise<JavaInfo> {
  const command = javaCommand(env);
  const result = await runCommand(command, ['-version'], { env });
  if (result.spawnError) {
    throw new Error(
      `Java ${MIN_JAVA_MAJOR}+ is needed to run the local Kafka broker and schema registry, but ` +
        `"${command}" could not be started (${result.spawnError.code ?? result.spawnError.message}). ` +
        `Install a JDK ${MIN_JAVA_MAJOR}+ and put it on PATH or set JAVA_HOME.`,
    );
  }
  const major = parseJavaMajor(result.output);
  if (major === null) throw new Error(`cannot tell the Java version from "${command} -version":\n${result.output}`);
  if (major < MIN_JAVA_MAJOR) {
    throw new Error(
      `Java ${MIN_JAVA_MAJOR}+ is needed (Apicurio Registry 3 is built for it); "${command}" is Java ${major}. ` +
        `Install a JDK ${MIN_JAVA_MAJOR}+ and put it on PATH or point JAVA_HOME at it.`,
    );
  }
  return { command, major, fingerprint: javaFingerprint(command, result.output) };
}

export async function checkMaven(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const command = 'mvn';
  const result = await runCommand(command, ['-v'], { env });
  if (result.spawnError) {
    throw new Error(
      'Apache Maven (mvn) is needed once, to fetch Kafka and Apicurio Registry from Maven Central ' +
        'into the cache, but it is not on PATH. Install Maven 3.8+ (e.g. `apt-get install maven`) and retry; ' +
        'later runs use the cache and do not need it.',
    );
  }
  if (result.code !== 0) throw new Error(`"mvn -v" failed (exit ${result.code}):\n${result.output}`);
  return command;
}
