/**
 * The non-Node toolchains the suite drives clients with, prepared once and cached outside
 * the repository under `${XDG_CACHE_HOME:-~/.cache}/tributary/`: the Go driver built with
 * `go build` (modules from the Go module proxy into the default GOMODCACHE, pinned by
 * go.sum) and a venv with the pinned Python client. Each cache entry is keyed by a hash
 * of its inputs, and only a finished one is reused. A missing toolchain is an error that
 * says what to install: the suite never skips.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifest, type Manifest } from './manifest.js';

const COMPAT_DIR = dirname(fileURLToPath(import.meta.url));
const GO_DIR = join(COMPAT_DIR, 'go');
const PYTHON_DIR = join(COMPAT_DIR, 'python');

const GO_REQUIRED = 'the Go toolchain is required for the compat suite: install Go >= 1.21';
const PYTHON_REQUIRED =
  'Python >= 3.10 with its venv module is required for the compat suite: install python3 and python3-venv';

interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; rejects only when it cannot be started. */
function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const errors = Buffer.concat(stderr).toString('utf8');
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: timedOut ? `${errors}\n(killed after ${options.timeoutMs} ms)` : errors,
      });
    });
  });
}

/** The version banner of a tool, or an error saying what to install. */
async function toolVersion(command: string, args: string[], required: string): Promise<string> {
  let result: CommandResult;
  try {
    result = await runCommand(command, args, { timeoutMs: 30_000 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${required} (\`${command}\` is not on PATH)`);
    throw error;
  }
  if (result.code !== 0) throw new Error(`${required} (\`${command} ${args.join(' ')}\` exited with ${result.code}: ${result.stderr.trim()})`);
  return `${result.stdout}${result.stderr}`.trim();
}

function requireVersion(banner: string, pattern: RegExp, minimum: [number, number], required: string): void {
  const match = pattern.exec(banner);
  const major = Number(match?.[1]);
  const minor = Number(match?.[2]);
  if (!match || major < minimum[0] || (major === minimum[0] && minor < minimum[1])) {
    throw new Error(`${required} (found: ${banner})`);
  }
}

function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tributary');
}

function hashOf(parts: Array<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export interface Prepared {
  /** The Go driver binary, or the venv's python. */
  path: string;
  /** True when a finished cache entry was reused. */
  cached: boolean;
  ms: number;
}

/**
 * Builds the Go driver into the cache (keyed by the Go version and the driver's
 * sources), or reuses the binary a previous run built.
 */
export async function buildGoDriver(): Promise<Prepared> {
  const started = performance.now();
  const banner = await toolVersion('go', ['version'], GO_REQUIRED);
  requireVersion(banner, /go(\d+)\.(\d+)/, [1, 21], GO_REQUIRED);
  const sources = ['go.mod', 'go.sum', 'main.go'].map((file) => readFileSync(join(GO_DIR, file)));
  const dir = join(cacheRoot(), `compat-go-${hashOf([banner, ...sources])}`);
  const binary = join(dir, 'compat-driver');
  if (existsSync(binary)) return { path: binary, cached: true, ms: performance.now() - started };

  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  const result = await runCommand('go', ['build', '-o', partial, '.'], {
    cwd: GO_DIR,
    env: {
      ...process.env,
      // go.sum pins every module: a build that would change go.mod or go.sum fails.
      GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=readonly -buildvcs=false`.trim(),
      // Build with the installed toolchain; never download another one.
      GOTOOLCHAIN: 'local',
      CGO_ENABLED: '0',
    },
    timeoutMs: 600_000,
  });
  if (result.code !== 0) throw new Error(`go build of the compat driver (test/compat/go) failed with ${result.code}:\n${result.stderr}`);
  renameSync(partial, binary);
  return { path: binary, cached: false, ms: performance.now() - started };
}

/**
 * Creates the venv with the pinned Python client in the cache (keyed by the interpreter
 * version and requirements.txt), or reuses the one a previous run finished. A venv left
 * half-made by an interrupted run has no marker and is made again.
 */
export async function preparePythonVenv(): Promise<Prepared> {
  const started = performance.now();
  const banner = await toolVersion('python3', ['--version'], PYTHON_REQUIRED);
  requireVersion(banner, /Python (\d+)\.(\d+)/, [3, 10], PYTHON_REQUIRED);
  const requirementsPath = join(PYTHON_DIR, 'requirements.txt');
  const requirements = readFileSync(requirementsPath);
  const dir = join(cacheRoot(), `compat-venv-${hashOf([banner, requirements])}`);
  const python = join(dir, 'bin', 'python');
  const marker = join(dir, '.tributary-installed');
  // The venv's python links to the interpreter that made it; if that is gone, make it anew.
  if (existsSync(marker) && existsSync(python)) return { path: python, cached: true, ms: performance.now() - started };

  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  const venv = await runCommand('python3', ['-m', 'venv', dir], { timeoutMs: 120_000 });
  if (venv.code !== 0) throw new Error(`${PYTHON_REQUIRED} (\`python3 -m venv\` failed: ${venv.stderr.trim()})`);
  const pip = await runCommand(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '-r', requirementsPath],
    { timeoutMs: 600_000 },
  );
  if (pip.code !== 0) throw new Error(`pip install -r test/compat/python/requirements.txt failed with ${pip.code}:\n${pip.stderr}`);
  writeFileSync(marker, requirements);
  return { path: python, cached: false, ms: performance.now() - started };
}

export const PYTHON_DRIVER = join(PYTHON_DIR, 'driver.py');

const JAVA_DIR = join(COMPAT_DIR, 'java');
const JAVA_SOURCE = join(JAVA_DIR, 'src', 'main', 'java', 'tributary', 'compat', 'Driver.java');
const JAVA_REQUIRED = 'a JDK >= 17 (java and javac) and Maven are required for the compat suite: install openjdk-17-jdk and maven';

/** The command line that runs the compiled Java driver. */
export interface JavaDriver extends Prepared {
  args: string[];
}

/**
 * Resolves analytics-java and its dependencies from Maven Central (pinned by
 * test/compat/java/pom.xml, into the same Maven cache the local stack uses) and compiles
 * Driver.java against them into the cache, keyed by the JDK and the driver's sources; or
 * reuses what a previous run finished.
 */
export async function prepareJavaDriver(): Promise<JavaDriver> {
  const started = performance.now();
  const javaBanner = await toolVersion('java', ['-version'], JAVA_REQUIRED);
  requireVersion(javaBanner, /version "(\d+)(?:\.(\d+))?/, [17, 0], JAVA_REQUIRED);
  await toolVersion('javac', ['-version'], JAVA_REQUIRED);
  const sources = [readFileSync(join(JAVA_DIR, 'pom.xml')), readFileSync(JAVA_SOURCE)];
  const dir = join(cacheRoot(), `compat-java-${hashOf([javaBanner, ...sources])}`);
  const classes = join(dir, 'classes');
  const classpathFile = join(dir, 'classpath.txt');
  const marker = join(dir, '.tributary-installed');
  const command = (classpath: string): string[] => ['-cp', `${classes}:${classpath}`, 'tributary.compat.Driver'];
  if (existsSync(marker)) return { path: 'java', args: command(readFileSync(classpathFile, 'utf8').trim()), cached: true, ms: performance.now() - started };

  rmSync(dir, { recursive: true, force: true });
  mkdirSync(classes, { recursive: true });
  await toolVersion('mvn', ['-v'], JAVA_REQUIRED);
  const resolve = await runCommand(
    'mvn',
    ['-B', '-q', '-f', join(JAVA_DIR, 'pom.xml'), `-Dmaven.repo.local=${join(cacheRoot(), 'm2')}`, 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`],
    { timeoutMs: 600_000 },
  );
  if (resolve.code !== 0) throw new Error(`resolving analytics-java (test/compat/java/pom.xml) failed with ${resolve.code}:\n${resolve.stdout}${resolve.stderr}`);
  const classpath = readFileSync(classpathFile, 'utf8').trim();
  const compile = await runCommand('javac', ['-encoding', 'UTF-8', '-d', classes, '-cp', classpath, JAVA_SOURCE], { timeoutMs: 300_000 });
  if (compile.code !== 0) throw new Error(`javac of the Java compat driver failed with ${compile.code}:\n${compile.stderr}`);
  writeFileSync(marker, javaBanner);
  return { path: 'java', args: command(classpath), cached: false, ms: performance.now() - started };
}

/**
 * Runs a driver program (the Go binary, the Python script) and reads the manifest it
 * prints. Settings go by environment so the write key never shows in a process list.
 */
export async function runDriverProgram(
  label: string,
  command: string,
  args: string[],
  settings: { endpoint: string; writeKey: string; runId: string; env?: Record<string, string> },
): Promise<Manifest> {
  const result = await runCommand(command, args, {
    env: {
      ...process.env,
      // The endpoint is on loopback; a proxy configured for the machine must not take it.
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
      COMPAT_ENDPOINT: settings.endpoint,
      COMPAT_WRITE_KEY: settings.writeKey,
      COMPAT_RUN_ID: settings.runId,
      ...settings.env,
    },
    timeoutMs: 120_000,
  });
  if (result.code !== 0) throw new Error(`${label} exited with ${result.code}:\n${result.stderr}`);
  return parseManifest(result.stdout, label);
}
