/**
 * helm and promtool for the deploy/ tests, built from source with the local Go toolchain
 * from the Go module proxy into `<cache>/bin` (the cache the local stack uses), once.
 *
 * Each tool is built inside its own downloaded module (`go mod download`, then `go build`
 * in that directory) rather than with `go install pkg@version`: every Prometheus release
 * whose dependencies the proxy serves has `replace`/`exclude` directives in its go.mod,
 * which `go install pkg@version` refuses, while a build inside the module honours them
 * exactly as upstream's own build does. Helm goes the same way so there is one install path.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../local/java.js';
import { resolveCacheDir } from '../local/paths.js';

export interface GoTool {
  name: string;
  module: string;
  version: string;
  /** Directory of the main package inside the module. */
  packageDir: string;
  /** -ldflags the project's release build passes, computed from the module's go.mod. */
  ldflags?: (goMod: string) => string;
  /** Build tags; part of the install key, since they change the binary. */
  tags?: readonly string[];
}

/**
 * What helm's Makefile stamps in: its version, and the Kubernetes version it assumes when
 * it renders without a cluster (client-go v0.N.x → 1.N). Without them helm says v3.22 and
 * assumes Kubernetes 1.20, which fails the chart's kubeVersion constraint.
 */
export function helmLdflags(version: string, goMod: string): string {
  const clientGo = /^\s*k8s\.io\/client-go\s+v0\.(\d+)\.\d+/m.exec(goMod);
  if (!clientGo?.[1]) throw new Error('helm go.mod requires no k8s.io/client-go v0.N.x; cannot tell its Kubernetes version');
  return [
    '-s -w',
    `-X helm.sh/helm/v3/internal/version.version=${version}`,
    `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${clientGo[1]}`,
    `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${clientGo[1]}`,
  ].join(' ');
}

const HELM_VERSION = 'v3.22.0';
export const HELM: GoTool = {
  name: 'helm',
  module: 'helm.sh/helm/v3',
  version: HELM_VERSION,
  packageDir: 'cmd/helm',
  ldflags: (goMod) => helmLdflags(HELM_VERSION, goMod),
};
/**
 * The Prometheus release a module version stands for: the Go module tags v0.3xx.y for
 * 3.xx.y (and v0.xx.y for 2.xx.y), because the repository never adopted a /v3 module path.
 */
export function prometheusRelease(moduleVersion: string): string {
  const match = /^v0\.(\d+)\.(\d+)$/.exec(moduleVersion);
  if (!match?.[1] || !match[2]) throw new Error(`not a Prometheus module version: ${moduleVersion}`);
  const minor = Number(match[1]);
  return minor >= 300 ? `${Math.floor(minor / 100)}.${minor % 100}.${match[2]}` : `2.${minor}.${match[2]}`;
}

const PROMETHEUS_MODULE_VERSION = 'v0.315.0';
export const PROMTOOL: GoTool = {
  name: 'promtool',
  module: 'github.com/prometheus/prometheus',
  version: PROMETHEUS_MODULE_VERSION,
  packageDir: 'cmd/promtool',
  // What `promtool --version` prints; upstream's release build (promu) stamps the same variable.
  ldflags: () => `-s -w -X github.com/prometheus/common/version.Version=${prometheusRelease(PROMETHEUS_MODULE_VERSION)}`,
  // Prometheus's own switch to leave out the service-discovery plugins (every cloud SDK and
  // client-go): checking and testing rule files needs none, and it halves the build.
  tags: ['remove_all_sd'],
};

export interface InstalledTool {
  path: string;
  /** Milliseconds spent building this call; 0 when the cached binary was reused. */
  buildMs: number;
}

/** Identifies the bytes of a build; a marker with another key means "rebuild". */
export function installKey(tool: GoTool): string {
  const tags = tool.tags?.length ? `+tags=${tool.tags.join(',')}` : '';
  return `${tool.module}@${tool.version}/${tool.packageDir}${tags}`;
}

/** The module directory from `go mod download -json` output. */
export function downloadedModuleDir(output: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    throw new Error(`go mod download did not print JSON:\n${output}`);
  }
  const record = parsed as { Dir?: unknown; Error?: unknown };
  if (typeof record.Error === 'string') throw new Error(`go mod download failed: ${record.Error}`);
  if (typeof record.Dir !== 'string' || record.Dir === '') throw new Error(`go mod download printed no Dir:\n${output}`);
  return record.Dir;
}

export function toolsBinDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveCacheDir(env), 'bin');
}

const markerPath = (binDir: string, tool: GoTool): string => join(binDir, `.${tool.name}.installed.json`);

async function isInstalled(binDir: string, tool: GoTool): Promise<boolean> {
  if (!existsSync(join(binDir, tool.name))) return false;
  try {
    const marker = JSON.parse(await readFile(markerPath(binDir, tool), 'utf8')) as { key?: unknown };
    return marker.key === installKey(tool);
  } catch {
    return false;
  }
}

function tail(text: string, lines = 25): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Returns the path of the pinned tool, building it first when the cache has no build of
 * exactly this version. Fails with a message saying what to install when Go is missing.
 */
export async function ensureGoTool(
  tool: GoTool,
  options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {},
): Promise<InstalledTool> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const binDir = toolsBinDir(env);
  const path = join(binDir, tool.name);
  if (await isInstalled(binDir, tool)) return { path, buildMs: 0 };

  const probe = await runCommand('go', ['version'], { env });
  if (probe.spawnError) {
    throw new Error(
      `Go is required to build ${tool.name} ${tool.version} for the deploy/ tests, but "go" is not on PATH ` +
        `(${probe.spawnError.code ?? probe.spawnError.message}). Install Go 1.26 or newer from https://go.dev/dl/ ` +
        `and retry; the build is cached in ${binDir}.`,
    );
  }
  log(`[deploy] building ${tool.name} ${tool.version} with ${probe.output.trim()} into ${binDir} (once; takes minutes)`);
  const started = Date.now();
  const moduleRef = `${tool.module}@${tool.version}`;
  const download = await runCommand('go', ['mod', 'download', '-json', moduleRef], { env });
  if (download.code !== 0) throw new Error(`go mod download ${moduleRef} failed (exit ${download.code}):\n${tail(download.output)}`);
  const moduleDir = downloadedModuleDir(download.output);

  await mkdir(binDir, { recursive: true });
  const temp = join(binDir, `.tmp-${tool.name}-${randomBytes(4).toString('hex')}`);
  // GOWORK=off: Prometheus ships a go.work naming directories its module zip leaves out.
  // CGO_ENABLED=0: a static binary and no C compiler needed.
  const buildEnv = { ...env, GOWORK: 'off', CGO_ENABLED: '0' };
  const ldflags = tool.ldflags ? ['-ldflags', tool.ldflags(await readFile(join(moduleDir, 'go.mod'), 'utf8'))] : [];
  const tags = tool.tags?.length ? ['-tags', tool.tags.join(',')] : [];
  const build = await runCommand('go', ['build', '-trimpath', ...tags, ...ldflags, '-o', temp, `./${tool.packageDir}`], { env: buildEnv, cwd: moduleDir });
  if (build.code !== 0) {
    await rm(temp, { force: true });
    throw new Error(`building ${tool.name} ${tool.version} failed (exit ${build.code}):\n${tail(build.output)}`);
  }
  // The binary is in place before its marker, so a crash in between only costs a rebuild.
  await rename(temp, path);
  const markerTemp = `${markerPath(binDir, tool)}.${randomBytes(4).toString('hex')}`;
  await writeFile(markerTemp, `${JSON.stringify({ key: installKey(tool), builtAt: new Date().toISOString() })}\n`);
  await rename(markerTemp, markerPath(binDir, tool));
  const buildMs = Date.now() - started;
  log(`[deploy] built ${tool.name} ${tool.version} in ${(buildMs / 1000).toFixed(0)} s`);
  return { path, buildMs };
}
