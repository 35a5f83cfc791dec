import type { StackEndpoints } from './stack.js';

export const SERVICES = ['ingest', 'router', 'dispatcher', 'retry-scheduler', 'indexer'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Ops (metrics/health) ports of the services without a public HTTP API. */
export const OPS_PORTS: Record<Exclude<ServiceName, 'ingest'>, number> = {
  router: 9101,
  dispatcher: 9102,
  'retry-scheduler': 9103,
  indexer: 9104,
};

export const DEFAULT_ADMIN_TOKEN = 'tributary-local-admin';

/**
 * Ingest's V8 heap bound under npm start. On a machine with gigabytes free V8 grows the heap
 * rather than collect: a 1,000,000-member audience sync, whose working set is bounded (sorted
 * runs on disk, transactions of 2,000 changes), still took ingest to 387 MB of RSS; with the
 * heap bounded to this, 228 MB (1,010,000 Identify messages exact). An exported NODE_OPTIONS
 * that sets its own bound wins.
 */
export const INGEST_MAX_OLD_SPACE_MB = 160;

/**
 * The Node options every service runs with — under npm start, in the tests and benchmarks
 * (test/harness), in the image's CMD and the chart's args (their tests hold them to this list).
 *
 * `--initial-old-space-size=96`: left to itself, V8 gave the indexer (30–40 MB live, like the
 * others, a batch's records surviving a scavenge or two on their way to the database or Kafka) an
 * old generation limit of about 1.7 times what survived, and `--trace-incremental-marking` showed it
 * starting the next full collection with 23–25 MB of that room still free — in the indexer at
 * 1,000 events/s, 22–45 full collections in 30 s and 152–200 µs of CPU per event. With the old
 * generation's initial size at 96 MB: 12–13 in the same 30 s (most at start-up) and 130–140 µs;
 * in the benchmark at 1,000/s the router, the dispatcher and the indexer spent 10–30 % less CPU
 * per event. The cost: a heap that grows to about 96 MB before a full collection, where it stopped
 * at 55 (the benchmark's peak RSS: ingest 70–80 MB more, the router and the dispatcher within
 * their run-to-run spread).
 */
export const SERVICE_NODE_ARGS: readonly string[] = ['--initial-old-space-size=96'];
export const DEFAULT_INGEST_PORT = 8080;

export interface LocalSettings {
  configPath: string;
  adminToken: string;
  ingestPort: number;
  /** The embedded delivery log's PGlite data, kept with the stack's data (unless DELIVERY_LOG_DATABASE_URL points at a server). */
  deliveryLogDir: string;
}

/** What `npm start` reads from the user's environment, with the local defaults. */
export function localSettings(env: NodeJS.ProcessEnv, defaultConfigPath: string, resolvePath: (p: string) => string, dataDir = '.tributary/data'): LocalSettings {
  const port = Number(env['INGEST_PORT'] ?? DEFAULT_INGEST_PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new Error(`INGEST_PORT is not a port: ${env['INGEST_PORT']}`);
  return {
    configPath: resolvePath(env['TRIBUTARY_CONFIG'] || defaultConfigPath),
    adminToken: env['ADMIN_TOKEN'] || DEFAULT_ADMIN_TOKEN,
    ingestPort: port,
    deliveryLogDir: resolvePath(env['DELIVERY_LOG_DATA_DIR'] || `${dataDir}/delivery-log`),
  };
}

/** The address the services listen on: a laptop pipeline answers on loopback only, unless the user asks otherwise. */
export function serviceHost(base: NodeJS.ProcessEnv): string {
  return base['HTTP_HOST'] ?? '127.0.0.1';
}

/**
 * A service's environment: everything the user exported passes through (RETRY_LADDER,
 * LOG_LEVEL, …), overlaid with the stack endpoints and per-service ports, which must differ
 * per child and so cannot come from one shared variable.
 */
export function serviceEnv(
  name: ServiceName,
  base: NodeJS.ProcessEnv,
  stack: StackEndpoints,
  settings: LocalSettings,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...base,
    KAFKA_BROKERS: stack.brokers.join(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    TRIBUTARY_CONFIG: settings.configPath,
    ADMIN_TOKEN: settings.adminToken,
    INGEST_PORT: String(settings.ingestPort),
    // Local webhooks go to 127.0.0.1, which production refuses; an explicit user choice wins.
    DELIVERY_ALLOW_PRIVATE_NETWORKS: base['DELIVERY_ALLOW_PRIVATE_NETWORKS'] ?? 'true',
    HTTP_HOST: serviceHost(base),
    DELIVERY_LOG_DATA_DIR: settings.deliveryLogDir,
    DELIVERY_LOG_URL: `http://127.0.0.1:${OPS_PORTS.indexer}`,
  };
  if (name === 'ingest') {
    delete env['HTTP_PORT'];
    const options = base['NODE_OPTIONS'] ?? '';
    if (!options.includes('--max-old-space-size')) env['NODE_OPTIONS'] = `${options} --max-old-space-size=${INGEST_MAX_OLD_SPACE_MB}`.trim();
  }
  else env['HTTP_PORT'] = String(OPS_PORTS[name]);
  return env;
}

/** Where each service answers /readyz once it is up. */
export function readinessUrl(name: ServiceName, settings: LocalSettings): string {
  const port = name === 'ingest' ? settings.ingestPort : OPS_PORTS[name];
  return `http://127.0.0.1:${port}/readyz`;
}
