import { join } from 'node:path';

/** The Confluent-compatible API of Apicurio Registry, relative to its root. */
export const CCOMPAT_PATH = '/apis/ccompat/v7';

/**
 * The runnable jar inside an unpacked Apicurio distribution. 3.0.x ships a Quarkus legacy jar
 * (`*-runner.jar` beside lib/), 3.3.x a fast-jar (`quarkus-run.jar`); either may sit one
 * directory down depending on how the archive was built. Shallowest match wins.
 */
export function pickRegistryJar(relativePaths: string[]): string | null {
  const score = (p: string): number | null => {
    const base = p.split('/').pop() ?? '';
    if (base === 'quarkus-run.jar') return 0;
    if (base.endsWith('-runner.jar')) return 1;
    return null;
  };
  let best: { path: string; rank: [number, number] } | null = null;
  for (const p of relativePaths) {
    const s = score(p);
    if (s === null) continue;
    const rank: [number, number] = [p.split('/').length, s];
    if (!best || rank[0] < best.rank[0] || (rank[0] === best.rank[0] && rank[1] < best.rank[1])) best = { path: p, rank };
  }
  return best?.path ?? null;
}

export interface RegistryRunSettings {
  host: string;
  port: number;
  /** Directory for the H2 database files; lives inside the stack's data dir. */
  storageDir: string;
}

/**
 * System properties for Apicurio. Storage is an H2 *file* database next to Kafka's log dir,
 * so schemas live exactly as long as the records that reference their ids (the in-memory
 * default would forget them on every restart while Kafka keeps the records).
 */
export function registrySystemProperties(s: RegistryRunSettings): string[] {
  if (s.storageDir.includes(';')) {
    // The path goes into a JDBC URL where ';' starts H2 settings.
    throw new Error(`the registry data dir may not contain ';': ${s.storageDir}`);
  }
  const dbFile = join(s.storageDir, 'registry');
  return [
    `-Dquarkus.http.host=${s.host}`,
    `-Dquarkus.http.port=${s.port}`,
    '-Dapicurio.storage.kind=sql',
    '-Dapicurio.storage.sql.kind=h2',
    // WRITE_DELAY=0: H2 otherwise flushes commits up to 500 ms later, so a registry killed right
    // after registering a schema could forget an id that Kafka records already carry.
    `-Dapicurio.datasource.url=jdbc:h2:file:${dbFile};WRITE_DELAY=0`,
    // The default pool keeps 20 connections open; one local client needs a couple.
    '-Dapicurio.datasource.jdbc.initial-size=2',
    '-Dapicurio.datasource.jdbc.min-size=2',
    '-Dapicurio.datasource.jdbc.max-size=20',
    // ccompat ids are contentIds: what POST /subjects/{s}/versions returns is what
    // GET /schemas/ids/{id} accepts, and equal schemas in two subjects share one id, as in
    // Confluent's registry. This is the default; pinned because the serdes depend on it.
    '-Dapicurio.ccompat.legacy-id-mode.enabled=false',
  ];
}
