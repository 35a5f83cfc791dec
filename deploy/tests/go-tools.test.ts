import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { downloadedModuleDir, ensureGoTool, HELM, helmLdflags, installKey, prometheusRelease, PROMTOOL, type GoTool } from './go-tools.js';

describe('downloadedModuleDir', () => {
  it('reads Dir from go mod download -json', () => {
    expect(downloadedModuleDir('{"Path":"helm.sh/helm/v3","Version":"v3.22.0","Dir":"/m/helm.sh/helm/v3@v3.22.0"}')).toBe(
      '/m/helm.sh/helm/v3@v3.22.0',
    );
  });

  it('reports the module error or unreadable output', () => {
    expect(() => downloadedModuleDir('{"Path":"x","Error":"403 Forbidden"}')).toThrow(/go mod download failed: 403 Forbidden/);
    expect(() => downloadedModuleDir('go: not json')).toThrow(/did not print JSON/);
    expect(() => downloadedModuleDir('{"Path":"x"}')).toThrow(/no Dir/);
  });
});

describe('helmLdflags', () => {
  it('stamps the version and the Kubernetes minor of client-go, like helm\'s Makefile', () => {
    const flags = helmLdflags('v3.22.0', 'module helm.sh/helm/v3\n\nrequire (\n\tk8s.io/api v0.37.0\n\tk8s.io/client-go v0.37.2\n)\n');
    expect(flags).toContain('-X helm.sh/helm/v3/internal/version.version=v3.22.0');
    expect(flags).toContain('-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37');
    expect(flags).toContain('-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37');
  });

  it('refuses a go.mod without client-go rather than guessing', () => {
    expect(() => helmLdflags('v3.22.0', 'module x\n')).toThrow(/client-go/);
  });
});

describe('prometheusRelease', () => {
  it('maps module tags to releases', () => {
    expect(prometheusRelease('v0.315.0')).toBe('3.15.0');
    expect(prometheusRelease('v0.300.1')).toBe('3.0.1');
    expect(prometheusRelease('v0.55.1')).toBe('2.55.1');
    expect(() => prometheusRelease('v3.15.0')).toThrow(/not a Prometheus module version/);
  });
});

describe('ensureGoTool', () => {
  const tool: GoTool = { name: 'fake-tool', module: 'example.com/fake', version: 'v1.2.3', packageDir: 'cmd/fake' };
  let cacheDir: string;

  beforeEach(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'tributary-go-tools-'));
  });
  afterEach(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  it('reuses a cached build of exactly the pinned version without running go', async () => {
    await mkdir(join(cacheDir, 'bin'));
    await writeFile(join(cacheDir, 'bin', 'fake-tool'), '');
    await writeFile(join(cacheDir, 'bin', '.fake-tool.installed.json'), JSON.stringify({ key: installKey(tool) }));
    const installed = await ensureGoTool(tool, { env: { TRIBUTARY_CACHE_DIR: cacheDir, PATH: '' } });
    expect(installed).toEqual({ path: join(cacheDir, 'bin', 'fake-tool'), buildMs: 0 });
  });

  it('rebuilds when the marker names another version, and says Go is needed when it is missing', async () => {
    await mkdir(join(cacheDir, 'bin'));
    await writeFile(join(cacheDir, 'bin', 'fake-tool'), '');
    await writeFile(join(cacheDir, 'bin', '.fake-tool.installed.json'), JSON.stringify({ key: installKey({ ...tool, version: 'v1.0.0' }) }));
    await expect(ensureGoTool(tool, { env: { TRIBUTARY_CACHE_DIR: cacheDir, PATH: '' }, log: () => {} })).rejects.toThrow(
      /Go is required to build fake-tool v1\.2\.3 .* "go" is not on PATH/,
    );
  });

  it('keys a build by module, version, package and build tags', () => {
    expect(installKey(HELM)).toBe('helm.sh/helm/v3@v3.22.0/cmd/helm');
    expect(installKey(PROMTOOL)).toBe('github.com/prometheus/prometheus@v0.315.0/cmd/promtool+tags=remove_all_sd');
  });
});
