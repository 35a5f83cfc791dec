/**
 * The Helm chart, checked with a real helm (built from the Go module proxy on first use, see
 * tests/go-tools.ts): `helm lint --strict`, then `helm template` with the default values and
 * with ci/all-options-values.yaml, whose output is parsed and inspected.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { runCommand } from '../local/java.js';
import { repoRoot } from '../local/paths.js';
import { INGEST_MAX_OLD_SPACE_MB, SERVICE_NODE_ARGS } from '../local/service-env.js';
import { SERVICES, type ServiceName } from '../observability/metrics.js';
import { ensureGoTool, HELM } from '../tests/go-tools.js';

const chartDir = join(repoRoot, 'deploy', 'helm', 'tributary');
const allOptions = join(chartDir, 'ci', 'all-options-values.yaml');
const BUILD_TIMEOUT_MS = 30 * 60_000;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  name: string;
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: { readOnlyRootFilesystem?: boolean };
}
interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds: number;
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string }; persistentVolumeClaim?: { claimName: string }; emptyDir?: { sizeLimit?: string } }[];
  securityContext: { runAsNonRoot?: boolean; fsGroup?: number };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // Each kind has its own shape; the tests narrow with the interfaces above.
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  type?: string;
}
interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    strategy?: { type: string; rollingUpdate?: null };
    template: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}
interface Service extends K8sObject {
  spec: { type?: string; clusterIP?: string; selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
}
interface PersistentVolumeClaim extends K8sObject {
  spec: { accessModes: string[]; storageClassName?: string; resources: { requests: { storage: string } } };
}

let helm: string;
let helmHome: string;

async function runHelm(args: string[]): Promise<{ code: number | null; output: string }> {
  // A private HELM_*_HOME keeps the user's repositories and plugins out of the result.
  return runCommand(helm, args, {
    env: { ...process.env, HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data') },
  });
}

async function render(...args: string[]): Promise<K8sObject[]> {
  const result = await runHelm(['template', 'rel', chartDir, '--namespace', 'pipeline', ...args]);
  if (result.code !== 0) throw new Error(`helm template ${args.join(' ')} failed:\n${result.output}`);
  return parseAllDocuments(result.output)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/**
 * NOTES.txt as `helm install` would print it. helm template never renders NOTES, so a copy of
 * the chart gets a template that renders them into a ConfigMap with the same values.
 */
async function renderNotes(...args: string[]): Promise<string> {
  const copy = join(helmHome, 'notes-chart');
  await rm(copy, { recursive: true, force: true });
  await cp(chartDir, copy, { recursive: true });
  await rename(join(copy, 'templates', 'NOTES.txt'), join(copy, 'NOTES.txt'));
  const wrapper = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: |\n{{ tpl (.Files.Get "NOTES.txt") . | indent 4 }}\n';
  await writeFile(join(copy, 'templates', 'notes-under-test.yaml'), wrapper);
  const result = await runHelm(['template', 'rel', copy, '--namespace', 'pipeline', '--show-only', 'templates/notes-under-test.yaml', ...args]);
  if (result.code !== 0) throw new Error(`rendering NOTES.txt failed:\n${result.output}`);
  return (parse(result.output) as { data: { notes: string } }).data.notes;
}

const byKind = <T extends K8sObject>(objects: K8sObject[], kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];

function deploymentOf(objects: K8sObject[], service: ServiceName): Deployment {
  const found = byKind<Deployment>(objects, 'Deployment').find((d) => d.metadata.name === `rel-tributary-${service}`);
  if (!found) throw new Error(`no Deployment for ${service}`);
  return found;
}

function containerOf(objects: K8sObject[], service: ServiceName): Container {
  const container = deploymentOf(objects, service).spec.template.spec.containers[0];
  if (!container) throw new Error(`the ${service} Deployment has no container`);
  return container;
}

function envOf(container: Container): Map<string, EnvVar> {
  return new Map(container.env.map((variable) => [variable.name, variable]));
}

const plainEnv = (container: Container): Record<string, string | undefined> =>
  Object.fromEntries(container.env.filter((v) => v.valueFrom === undefined).map((v) => [v.name, v.value]));

beforeAll(async () => {
  helm = (await ensureGoTool(HELM)).path;
  helmHome = await mkdtemp(join(tmpdir(), 'tributary-helm-'));
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  if (helmHome) await rm(helmHome, { recursive: true, force: true });
});

describe('helm lint --strict', () => {
  it.each([
    ['the default values', []],
    ['every option switched on', ['--values', allOptions]],
  ])('passes with %s', async (_label, args) => {
    const result = await runHelm(['lint', '--strict', chartDir, ...args]);
    expect(result.output).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});

describe('helm template with the default values', () => {
  let objects: K8sObject[];
  beforeAll(async () => {
    objects = await render();
  });

  it('renders one Deployment per service, running that service from the one image with the services\' Node options', () => {
    expect(byKind(objects, 'Deployment').map((d) => d.metadata.name).sort()).toEqual(SERVICES.map((s) => `rel-tributary-${s}`).sort());
    for (const service of SERVICES) {
      const container = containerOf(objects, service);
      expect(container.image).toBe('tributary:0.1.0');
      expect(container.args).toEqual(['node', ...SERVICE_NODE_ARGS, `services/${service}/dist/main.js`]);
      const entry = join(repoRoot, container.args.at(-1) ?? '');
      expect(existsSync(entry), `${entry} is missing: run \`npm run build\` first`).toBe(true);
    }
  });

  it("bounds ingest's heap as npm start does, and no other service's", () => {
    const ingest = containerOf(objects, 'ingest').env.filter((variable) => variable.name === 'NODE_OPTIONS');
    expect(ingest).toEqual([{ name: 'NODE_OPTIONS', value: `--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB}` }]);
    for (const service of SERVICES.filter((s) => s !== 'ingest')) expect(envOf(containerOf(objects, service)).has('NODE_OPTIONS')).toBe(false);
  });

  it('gives ingest a writable /tmp for audience syncs (the root file system is read-only), and no other service', () => {
    const ingest = deploymentOf(objects, 'ingest').spec.template.spec;
    expect(ingest.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '2Gi' } }]);
    expect(containerOf(objects, 'ingest').volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(containerOf(objects, 'ingest').securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    for (const service of SERVICES.filter((s) => s !== 'ingest')) {
      expect(JSON.stringify(containerOf(objects, service).volumeMounts ?? [])).not.toContain('/tmp');
    }
  });

  it('serves every service on port 8080, probed at /healthz and /readyz', () => {
    for (const service of SERVICES) {
      const container = containerOf(objects, service);
      expect(container.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
      expect(plainEnv(container)[service === 'ingest' ? 'INGEST_PORT' : 'HTTP_PORT']).toBe('8080');
      expect(plainEnv(container)[service === 'ingest' ? 'HTTP_PORT' : 'INGEST_PORT']).toBeUndefined();
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.resources.requests).toBeDefined();
    }
  });

  it('passes every setting by env, with private networks refused', () => {
    for (const service of SERVICES) {
      expect(plainEnv(containerOf(objects, service))).toMatchObject({
        KAFKA_BROKERS: 'kafka:9092',
        SCHEMA_REGISTRY_URL: 'http://schema-registry:8081',
        TOPIC_NAMESPACE: 'tributary',
        LOG_LEVEL: 'info',
        SHUTDOWN_TIMEOUT: '30s',
        RETRY_LADDER: '10s,1m,5m,15m,30m,1h,1h,1h',
        RETRY_WINDOW: '4h',
        WEBHOOK_TIMEOUT: '5s',
        DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false',
        DEDUP_WINDOW: '24h',
      });
      // Unset means the broker's defaults.
      expect(plainEnv(containerOf(objects, service))).not.toHaveProperty('KAFKA_TOPIC_PARTITIONS');
      expect(plainEnv(containerOf(objects, service))).not.toHaveProperty('KAFKA_REPLICATION_FACTOR');
    }
  });

  it('gives the dispatcher its circuit breaker and 410 settings, and no other service', () => {
    expect(plainEnv(containerOf(objects, 'dispatcher'))).toMatchObject({
      CIRCUIT_FAILURES: '5',
      CIRCUIT_FAILURE_RATIO: '0.5',
      CIRCUIT_MIN_REQUESTS: '20',
      CIRCUIT_WINDOW: '10s',
      CIRCUIT_OPEN: '5s',
      CIRCUIT_MAX_OPEN: '5m',
      CIRCUIT_PROBES: '3',
      DELIVERY_DISABLE_ON_GONE: 'false',
    });
    for (const service of SERVICES.filter((name) => name !== 'dispatcher')) expect(plainEnv(containerOf(objects, service))).not.toHaveProperty('CIRCUIT_FAILURES');
    // Unset: the pod's resolv.conf.
    expect(plainEnv(containerOf(objects, 'dispatcher'))).not.toHaveProperty('DELIVERY_DNS_SERVERS');
  });

  it('names every instance after its pod, for its Kafka transactional ids', () => {
    for (const service of SERVICES) {
      expect(envOf(containerOf(objects, service)).get('INSTANCE_ID')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    }
  });

  it('gives the pods more time to stop than SHUTDOWN_TIMEOUT', () => {
    for (const service of SERVICES) {
      const pod = deploymentOf(objects, service).spec.template.spec;
      expect(pod.terminationGracePeriodSeconds).toBe(45);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number.parseInt(plainEnv(containerOf(objects, service))['SHUTDOWN_TIMEOUT'] ?? '', 10));
      expect(pod.securityContext.runAsNonRoot).toBe(true);
    }
  });

  it('reads ADMIN_TOKEN in ingest and the indexer only (ingest forwards the delivery-log routes with it), from a generated Secret', () => {
    for (const service of ['ingest', 'indexer'] as const) {
      const adminToken = envOf(containerOf(objects, service)).get('ADMIN_TOKEN');
      expect(adminToken?.value).toBeUndefined();
      expect(adminToken?.valueFrom?.secretKeyRef).toEqual({ name: 'rel-tributary-admin', key: 'admin-token' });
    }
    const [secret] = byKind(objects, 'Secret');
    expect(secret?.metadata.name).toBe('rel-tributary-admin');
    expect(Buffer.from(secret?.data?.['admin-token'] ?? '', 'base64').toString()).toMatch(/^[A-Za-z0-9]{40}$/);
    for (const service of SERVICES.filter((s) => s !== 'ingest' && s !== 'indexer')) expect(envOf(containerOf(objects, service)).has('ADMIN_TOKEN')).toBe(false);
  });

  it('mounts no config file unless one is given, leaving config to the admin API', () => {
    expect(byKind(objects, 'ConfigMap')).toEqual([]);
    expect(envOf(containerOf(objects, 'ingest')).has('TRIBUTARY_CONFIG')).toBe(false);
    expect(deploymentOf(objects, 'ingest').spec.template.spec.volumes?.map((volume) => volume.name)).toEqual(['tmp']);
  });

  it('annotates the pods for Prometheus scraping', () => {
    for (const service of SERVICES) {
      expect(deploymentOf(objects, service).spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '8080',
        'prometheus.io/path': '/metrics',
      });
    }
  });

  it('exposes ingest and (to ingest) the indexer through Services, and the others through headless metrics Services', () => {
    const services = byKind<Service>(objects, 'Service');
    expect(services.map((s) => s.metadata.name).sort()).toEqual(SERVICES.map((s) => `rel-tributary-${s}`).sort());
    for (const { metadata, spec } of services) {
      if (metadata.name === 'rel-tributary-ingest') {
        expect(spec.type).toBe('ClusterIP');
        expect(spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
      } else if (metadata.name === 'rel-tributary-indexer') {
        expect(spec.type).toBe('ClusterIP');
        expect(spec.clusterIP).toBeUndefined();
        expect(spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
      } else {
        expect(spec.clusterIP).toBe('None');
        expect(spec.ports[0]?.targetPort).toBe('http');
      }
    }
  });

  it('leaves the optional objects out', () => {
    for (const kind of ['Ingress', 'PodDisruptionBudget', 'ServiceMonitor', 'PrometheusRule']) expect(byKind(objects, kind)).toEqual([]);
  });
});

describe('helm template with every option', () => {
  let objects: K8sObject[];
  const values = parse(readFileSync(allOptions, 'utf8')) as { config: { declarative: unknown }; adminToken: { value: string } };

  beforeAll(async () => {
    objects = await render('--values', allOptions);
  });

  it('passes the Kafka, delivery and extra settings through', () => {
    for (const service of SERVICES) {
      const env = plainEnv(containerOf(objects, service));
      expect(env).toMatchObject({
        KAFKA_BROKERS: 'kafka-0.kafka:9092,kafka-1.kafka:9092,kafka-2.kafka:9092',
        SCHEMA_REGISTRY_URL: 'http://registry.kafka:8080/apis/ccompat/v7',
        TOPIC_NAMESPACE: 'prod',
        KAFKA_TOPIC_PARTITIONS: '12',
        KAFKA_REPLICATION_FACTOR: '3',
        LOG_LEVEL: 'debug',
        SHUTDOWN_TIMEOUT: '40s',
        RETRY_LADDER: '5s,30s,2m',
        RETRY_WINDOW: '1h',
        WEBHOOK_TIMEOUT: '3s',
        DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
        DEDUP_WINDOW: '12h',
        NODE_OPTIONS: '--max-old-space-size=384',
      });
      expect(containerOf(objects, service).image).toBe('registry.example.com/tributary:1.2.3');
      expect(deploymentOf(objects, service).spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    }
    expect(plainEnv(containerOf(objects, 'dispatcher'))).toMatchObject({ CIRCUIT_FAILURES: '10', CIRCUIT_FAILURE_RATIO: '0.8', CIRCUIT_PROBES: '1', DELIVERY_DISABLE_ON_GONE: 'true', DELIVERY_DNS_SERVERS: '10.0.0.10,10.0.0.11:5353' });
    expect(plainEnv(containerOf(objects, 'ingest'))['INGEST_EXTRA']).toBe('1');
    // A NODE_OPTIONS in extraEnv replaces ingest's bound rather than sitting beside it.
    expect(containerOf(objects, 'ingest').env.filter((variable) => variable.name === 'NODE_OPTIONS')).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }]);
    expect(envOf(containerOf(objects, 'dispatcher')).get('DISPATCHER_EXTRA')?.valueFrom?.secretKeyRef).toEqual({ name: 'dispatcher-extra', key: 'value' });
    expect(Object.fromEntries(SERVICES.map((s) => [s, deploymentOf(objects, s).spec.replicas]))).toEqual({
      ingest: 3,
      router: 4,
      dispatcher: 6,
      'retry-scheduler': 2,
      indexer: 3,
    });
  });

  it('mounts the declarative config from a ConfigMap in ingest only', () => {
    const [configMap] = byKind(objects, 'ConfigMap').filter((c) => c.metadata.name === 'rel-tributary-config');
    expect(parse(configMap?.data?.['tributary.yaml'] ?? '')).toEqual(values.config.declarative);
    const ingest = deploymentOf(objects, 'ingest').spec.template;
    expect(ingest.spec.volumes).toEqual([
      { name: 'config', configMap: { name: 'rel-tributary-config' } },
      { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
    ]);
    expect(containerOf(objects, 'ingest').volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/tributary', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    expect(plainEnv(containerOf(objects, 'ingest'))['TRIBUTARY_CONFIG']).toBe('/etc/tributary/tributary.yaml');
    expect(ingest.metadata.annotations?.['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    for (const service of SERVICES.filter((s) => s !== 'ingest')) {
      expect(deploymentOf(objects, service).spec.template.spec.volumes).toBeUndefined();
      expect(plainEnv(containerOf(objects, service))).not.toHaveProperty('TRIBUTARY_CONFIG');
    }
  });

  it('keeps secret values out of every container env and out of the ConfigMap', () => {
    for (const service of SERVICES) {
      const text = JSON.stringify(containerOf(objects, service).env);
      expect(text).not.toContain(values.adminToken.value);
      expect(text).not.toContain('wk_test_write_key');
    }
    const [secret] = byKind(objects, 'Secret');
    expect(Buffer.from(secret?.data?.['admin-token'] ?? '', 'base64').toString()).toBe(values.adminToken.value);
    // The shared secret reaches ingest from a Secret and is expanded into the config file there.
    const [configMap] = byKind(objects, 'ConfigMap').filter((c) => c.metadata.name === 'rel-tributary-config');
    expect(configMap?.data?.['tributary.yaml']).toContain('sharedSecret: ${CRM_HOOKS_SHARED_SECRET}');
    expect(envOf(containerOf(objects, 'ingest')).get('CRM_HOOKS_SHARED_SECRET')?.valueFrom?.secretKeyRef).toEqual({ name: 'crm-hooks', key: 'shared-secret' });
  });

  it('renders the ServiceMonitor so the services keep their `service` label and the rules find the targets', () => {
    const [monitor] = byKind(objects, 'ServiceMonitor');
    const spec = monitor?.spec as { jobLabel: string; podTargetLabels: string[]; selector: { matchLabels: Record<string, string> }; endpoints: Record<string, unknown>[] };
    expect(monitor?.metadata.labels?.['release']).toBe('kube-prometheus-stack');
    expect(spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '10s', honorLabels: true }]);
    for (const service of byKind(objects, 'Service')) {
      expect(service.metadata.labels).toMatchObject(spec.selector.matchLabels);
      expect(service.metadata.labels?.[spec.jobLabel]).toMatch(/^tributary-/);
    }
    // TributaryServiceDown selects `up` on app_kubernetes_io_part_of, which only target labels reach.
    expect(spec.podTargetLabels).toEqual(['app.kubernetes.io/part-of', 'app.kubernetes.io/component']);
    for (const service of SERVICES) {
      expect(deploymentOf(objects, service).spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'tributary', 'app.kubernetes.io/component': service });
    }
    // The pods are scraped through the ServiceMonitor only.
    for (const service of SERVICES) expect(deploymentOf(objects, service).spec.template.metadata.annotations ?? {}).not.toHaveProperty('prometheus.io/scrape');
  });

  it('renders the rule file as a PrometheusRule and the dashboards for the Grafana sidecar', () => {
    const [rule] = byKind(objects, 'PrometheusRule');
    const ruleFile = parse(readFileSync(join(repoRoot, 'deploy', 'prometheus', 'tributary-rules.yaml'), 'utf8')) as { groups: unknown };
    expect(rule?.spec).toEqual({ groups: ruleFile.groups });
    const [dashboards] = byKind(objects, 'ConfigMap').filter((c) => c.metadata.name === 'rel-tributary-dashboards');
    expect(dashboards?.metadata.labels?.['grafana_dashboard']).toBe('1');
    expect(dashboards?.metadata.annotations).toEqual({ grafana_folder: 'Tributary' });
    const dashboard = readFileSync(join(repoRoot, 'deploy', 'grafana', 'tributary-overview.json'), 'utf8');
    expect(JSON.parse(dashboards?.data?.['tributary-overview.json'] ?? '')).toEqual(JSON.parse(dashboard));
  });

  it('renders an Ingress for ingest, a budget per service and the spread constraints', () => {
    const [ingress] = byKind(objects, 'Ingress');
    const rules = (ingress?.spec as { rules: { host: string; http: { paths: { path: string; backend: unknown }[] } }[] }).rules;
    expect(rules[0]?.host).toBe('events.example.com');
    expect(rules[0]?.http.paths.map((p) => p.path)).toEqual(['/v1', '/admin']);
    expect(rules[0]?.http.paths[0]?.backend).toEqual({ service: { name: 'rel-tributary-ingest', port: { number: 443 } } });
    const budgets = byKind(objects, 'PodDisruptionBudget');
    expect(budgets.map((b) => [b.metadata.name, b.spec?.['minAvailable'] ?? `max ${String(b.spec?.['maxUnavailable'])}`]).sort()).toEqual([
      ['rel-tributary-dispatcher', 'max 1'],
      ['rel-tributary-indexer', 2],
      ['rel-tributary-ingest', 2],
      ['rel-tributary-retry-scheduler', 'max 1'],
      ['rel-tributary-router', 'max 1'],
    ]);
    const spread = (deploymentOf(objects, 'router').spec.template.spec as unknown as { topologySpreadConstraints: { labelSelector: unknown }[] })
      .topologySpreadConstraints;
    expect(spread[0]?.labelSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/name': 'tributary', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'router' },
    });
  });
});

describe('helm template with the ServiceMonitor and the default pod annotations', () => {
  it('leaves the scrape annotations out, so the pods are not scraped twice, and keeps the others', async () => {
    const objects = await render('--set', 'metrics.serviceMonitor.enabled=true', '--set', 'podAnnotations.team=payments');
    expect(byKind(objects, 'ServiceMonitor')).toHaveLength(1);
    for (const service of SERVICES) {
      const annotations = deploymentOf(objects, service).spec.template.metadata.annotations ?? {};
      expect(Object.keys(annotations).filter((key) => key.startsWith('prometheus.io/')), service).toEqual([]);
      expect(annotations['team'], service).toBe('payments');
    }
  });
});

describe('helm template with existing Secrets', () => {
  it('reads the admin token and the config file from them and creates neither', async () => {
    const objects = await render(
      '--set', 'adminToken.existingSecret=ops-admin', '--set', 'adminToken.existingSecretKey=token',
      '--set', 'config.existingSecret=tributary-config',
    );
    expect(byKind(objects, 'Secret')).toEqual([]);
    expect(byKind(objects, 'ConfigMap')).toEqual([]);
    expect(envOf(containerOf(objects, 'ingest')).get('ADMIN_TOKEN')?.valueFrom?.secretKeyRef).toEqual({ name: 'ops-admin', key: 'token' });
    expect(deploymentOf(objects, 'ingest').spec.template.spec.volumes).toEqual([
      { name: 'config', secret: { secretName: 'tributary-config', items: [{ key: 'tributary.yaml', path: 'tributary.yaml' }] } },
      { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
    ]);
    expect(plainEnv(containerOf(objects, 'ingest'))['TRIBUTARY_CONFIG']).toBe('/etc/tributary/tributary.yaml');
  });
});

describe('the delivery log', () => {
  const DATA_DIR = '/var/lib/tributary/delivery-log';

  it('embeds PGlite on a PersistentVolumeClaim by default: one indexer pod, replaced with Recreate', async () => {
    // indexer.replicas=3 is overruled: PGlite is one process on one volume.
    const objects = await render('--set', 'indexer.replicas=3');
    const indexer = deploymentOf(objects, 'indexer');
    expect(indexer.spec.replicas).toBe(1);
    expect(indexer.spec.strategy).toEqual({ type: 'Recreate', rollingUpdate: null });
    const [claim, ...others] = byKind<PersistentVolumeClaim>(objects, 'PersistentVolumeClaim');
    expect(others).toEqual([]);
    expect(claim?.metadata.name).toBe('rel-tributary-delivery-log');
    expect(claim?.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } });
    expect(indexer.spec.template.spec.volumes).toEqual([{ name: 'delivery-log', persistentVolumeClaim: { claimName: 'rel-tributary-delivery-log' } }]);
    const container = containerOf(objects, 'indexer');
    expect(container.volumeMounts).toEqual([{ name: 'delivery-log', mountPath: DATA_DIR }]);
    expect(plainEnv(container)).toMatchObject({ DELIVERY_LOG_DATA_DIR: DATA_DIR, DELIVERY_LOG_RETENTION: '7d', HTTP_PORT: '8080' });
    expect(envOf(container).has('DELIVERY_LOG_DATABASE_URL')).toBe(false);
    // The rest of the root file system stays read-only: PGlite writes only in its data directory,
    // which the pod's fsGroup makes writable for the service's user.
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect(indexer.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, fsGroup: 1000 });
    // Only the indexer gets the volume.
    for (const service of SERVICES.filter((s) => s !== 'indexer')) expect(JSON.stringify(deploymentOf(objects, service).spec.template.spec.volumes ?? [])).not.toContain('delivery-log');
  });

  it('still lets the embedded indexer be scaled to 0', async () => {
    expect(deploymentOf(await render('--set', 'indexer.replicas=0'), 'indexer').spec.replicas).toBe(0);
  });

  it('points ingest at the indexer Service, whose port and selector reach the indexer pods', async () => {
    const objects = await render();
    const url = new URL(plainEnv(containerOf(objects, 'ingest'))['DELIVERY_LOG_URL'] ?? '');
    const service = byKind<Service>(objects, 'Service').find((s) => s.metadata.name === url.hostname);
    expect(url.protocol).toBe('http:');
    expect(service?.spec.selector).toMatchObject({ 'app.kubernetes.io/component': 'indexer', 'app.kubernetes.io/instance': 'rel' });
    expect(service?.spec.ports).toEqual([{ name: 'http', port: Number(url.port), targetPort: 'http', protocol: 'TCP' }]);
    expect(containerOf(objects, 'indexer').ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    for (const service of SERVICES.filter((s) => s !== 'ingest')) expect(plainEnv(containerOf(objects, service))).not.toHaveProperty('DELIVERY_LOG_URL');
  });

  it.each([
    [['--set', 'deliveryLog.embedded.persistence.storageClass=fast-ssd', '--set', 'deliveryLog.embedded.persistence.size=50Gi'], 'fast-ssd', '50Gi'],
    [['--set', 'deliveryLog.embedded.persistence.storageClass=-'], '', '10Gi'],
  ])('sizes the claim and picks its storage class: %j', async (args, storageClassName, storage) => {
    const [claim] = byKind<PersistentVolumeClaim>(await render(...args), 'PersistentVolumeClaim');
    expect(claim?.spec.storageClassName).toBe(storageClassName);
    expect(claim?.spec.resources.requests.storage).toBe(storage);
  });

  it('mounts an existing claim instead of creating one', async () => {
    const objects = await render('--set', 'deliveryLog.embedded.persistence.existingClaim=kept-delivery-log');
    expect(byKind(objects, 'PersistentVolumeClaim')).toEqual([]);
    expect(deploymentOf(objects, 'indexer').spec.template.spec.volumes).toEqual([{ name: 'delivery-log', persistentVolumeClaim: { claimName: 'kept-delivery-log' } }]);
  });

  it("reads the team's PostgreSQL URL from a Secret, and scales the indexer without a volume", async () => {
    const objects = await render('--values', allOptions);
    const indexer = deploymentOf(objects, 'indexer');
    expect(indexer.spec.replicas).toBe(3);
    expect(indexer.spec.strategy).toBeUndefined();
    expect(indexer.spec.template.spec.volumes).toBeUndefined();
    expect(byKind(objects, 'PersistentVolumeClaim')).toEqual([]);
    const env = envOf(containerOf(objects, 'indexer'));
    expect(env.get('DELIVERY_LOG_DATABASE_URL')).toEqual({ name: 'DELIVERY_LOG_DATABASE_URL', valueFrom: { secretKeyRef: { name: 'delivery-log-db', key: 'url' } } });
    expect(env.has('DELIVERY_LOG_DATA_DIR')).toBe(false);
    expect(plainEnv(containerOf(objects, 'indexer'))).toMatchObject({ DELIVERY_LOG_RETENTION: '14d', INDEXER_MAX_BATCH: '5000' });
    expect(byKind(objects, 'Secret').map((secret) => secret.metadata.name)).toEqual(['rel-tributary-admin']);
  });

  it('passes a URL without a password as it is (the password may come from a Secret as PGPASSWORD)', async () => {
    const url = 'postgresql://tributary@db.example.com:5432/tributary?sslmode=require';
    const objects = await render('--set', `deliveryLog.database.url=${url}`);
    expect(plainEnv(containerOf(objects, 'indexer'))['DELIVERY_LOG_DATABASE_URL']).toBe(url);
    expect(deploymentOf(objects, 'indexer').spec.strategy).toBeUndefined();
    expect(byKind(objects, 'PersistentVolumeClaim')).toEqual([]);
  });

  it.each([
    [['--set', 'deliveryLog.database.url=postgresql://tributary:s3cret@db:5432/tributary'], /deliveryLog.database.url holds a password/],
    [['--set', 'deliveryLog.database.url=postgres://tributary@db/tributary?sslmode=require&password=s3cret'], /deliveryLog.database.url holds a password/],
    [['--set', 'deliveryLog.database.url=postgres://db/tributary', '--set', 'deliveryLog.database.existingSecret=db'], /set url or existingSecret, not both/],
    [['--set', 'deliveryLog.database.url=mysql://db/tributary'], /deliveryLog.*database.*url/],
    [['--set', 'deliveryLog.retention=a week'], /retention/],
    [['--set', 'deliveryLog.embedded.persistence.size=big'], /size/],
  ])('refuses %j', async (args, message) => {
    const result = await runHelm(['template', 'rel', chartDir, ...args]);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(message);
    // The refusal must not echo the password back into CI logs.
    expect(result.output).not.toContain('s3cret');
  });
});

describe('NOTES.txt', () => {
  it('tells how to reach ingest and read the generated admin token', async () => {
    const notes = await renderNotes();
    expect(notes).toContain('kubectl -n pipeline port-forward svc/rel-tributary-ingest 8080:80');
    expect(notes).toContain("kubectl -n pipeline get secret rel-tributary-admin -o jsonpath='{.data.admin-token}' | base64 -d");
    expect(notes).toContain('The token was generated by the chart.');
    expect(notes).not.toContain('WARNING');
    expect(notes).toContain("is in the indexer's\nembedded database (PGlite) on PersistentVolumeClaim rel-tributary-delivery-log (10Gi).");
    expect(notes).toContain('the indexer runs as 1 replica with strategy Recreate');
    expect(notes).not.toContain('is ignored');
  });

  it('warns that the rules see nothing when the PrometheusRule comes without the ServiceMonitor', async () => {
    const notes = await renderNotes('--set', 'prometheusRule.enabled=true');
    expect(notes).toContain('WARNING: prometheusRule is enabled but metrics.serviceMonitor is not.');
    expect(notes).toContain('labelmap __meta_kubernetes_pod_label_(.+)');
    expect(await renderNotes('--set', 'prometheusRule.enabled=true', '--set', 'metrics.serviceMonitor.enabled=true')).not.toContain('WARNING');
  });

  it('says when indexer.replicas is overruled by the embedded database', async () => {
    expect(await renderNotes('--set', 'indexer.replicas=2')).toContain('indexer.replicas=2 is ignored.');
  });

  it('shows the ingress URL, the config source, the partition cap and warns about private networks', async () => {
    const notes = await renderNotes('--values', allOptions);
    expect(notes).toContain('https://events.example.com/v1/batch');
    expect(notes).toContain('ingest loads the declarative config from /etc/tributary/tributary.yaml (ConfigMap, from config.declarative)');
    expect(notes).toContain('Topics are created with 12 partitions');
    expect(notes).toContain('is in PostgreSQL,\nURL from Secret delivery-log-db, key url;');
    expect(notes).not.toContain('PGlite');
    expect(notes).toContain('WARNING: delivery.allowPrivateNetworks is true');
    expect(notes).not.toContain('WARNING: prometheusRule');
    expect(notes).not.toContain('The token was generated by the chart.');
  });
});

describe('values the chart refuses', () => {
  it.each([
    [['--set', 'kafka.brokers=null'], /missing property 'brokers'/],
    [['--set', 'delivery.allowPrivateNetworks=yes'], /allowPrivateNetworks.*want boolean/],
    [['--set-string', 'delivery.retryLadder=10'], /retryLadder/],
    [['--set', 'kafka.bruker=x'], /additional properties 'bruker' not allowed/],
    [['--set', 'terminationGracePeriodSeconds=30'], /terminationGracePeriodSeconds \(30\) must be longer than shutdownTimeoutSeconds \(30\)/],
    [['--set', 'ingest.tmp.sizeLimit=big'], /ingest\/tmp\/sizeLimit/],
    [['--set', 'ingest.maxOldSpaceSizeMb=8'], /ingest\/maxOldSpaceSizeMb/],
  ])('%j', async (args, message) => {
    const result = await runHelm(['template', 'rel', chartDir, ...args]);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(message);
  });
});
