import { describe, expect, it } from 'vitest';
import { pickRegistryJar, registrySystemProperties } from './registry-config.js';

describe('pickRegistryJar', () => {
  it('finds the legacy runner jar of Apicurio 3.0', () => {
    expect(pickRegistryJar(['meta/x.txt', 'apicurio-registry-app-3.0.9-runner.jar', 'lib/a.jar'])).toBe(
      'apicurio-registry-app-3.0.9-runner.jar',
    );
  });

  it('finds the fast-jar launcher of Apicurio 3.3, also one level down', () => {
    expect(pickRegistryJar(['quarkus-run.jar', 'app/apicurio-registry-app-3.3.3.jar'])).toBe('quarkus-run.jar');
    expect(pickRegistryJar(['apicurio-registry-3.3.3/quarkus-app/quarkus-run.jar', 'README'])).toBe(
      'apicurio-registry-3.3.3/quarkus-app/quarkus-run.jar',
    );
  });

  it('prefers the shallowest candidate', () => {
    expect(pickRegistryJar(['a/b/quarkus-run.jar', 'x-runner.jar'])).toBe('x-runner.jar');
  });

  it('returns null when there is nothing to run', () => {
    expect(pickRegistryJar(['lib/a.jar', 'README.md'])).toBeNull();
  });
});

describe('registrySystemProperties', () => {
  const props = registrySystemProperties({ host: '127.0.0.1', port: 8081, storageDir: '/data/registry' });

  it('binds to loopback on the given port', () => {
    expect(props).toContain('-Dquarkus.http.host=127.0.0.1');
    expect(props).toContain('-Dquarkus.http.port=8081');
  });

  it('stores schemas in an H2 file under the data dir, flushed on commit', () => {
    expect(props).toContain('-Dapicurio.storage.kind=sql');
    expect(props).toContain('-Dapicurio.datasource.url=jdbc:h2:file:/data/registry/registry;WRITE_DELAY=0');
  });

  it('pins ccompat ids to contentIds', () => {
    expect(props).toContain('-Dapicurio.ccompat.legacy-id-mode.enabled=false');
  });

  it('refuses a path that would corrupt the JDBC URL', () => {
    expect(() => registrySystemProperties({ host: 'h', port: 1, storageDir: '/a;b' })).toThrow(/;/);
  });
});
