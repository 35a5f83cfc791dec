/**
 * What every benchmark scenario does to the pipeline under test: the services' environment,
 * admin API calls to configure it, and removing the run's topics and groups afterwards.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from 'kafkajs';

export const ADMIN_TOKEN = 'bench-admin-token';
export const SHARED_SECRET = 'bench-shared-secret';

/** Environment of the four services in a run's namespace (loopback only, private networks allowed for the local receivers). */
export function benchServiceEnv(
  stack: { brokers: string[]; registryUrl: string },
  namespace: string,
  options: { logLevel: string; partitions: number | undefined },
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {
    KAFKA_BROKERS: stack.brokers.join(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    TOPIC_NAMESPACE: namespace,
    HTTP_HOST: '127.0.0.1',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    ADMIN_TOKEN,
    LOG_LEVEL: options.logLevel,
    INSTANCE_ID: 'bench',
    // The indexer's embedded delivery log (PGlite), one per run: deleted with the namespace.
    DELIVERY_LOG_DATA_DIR: deliveryLogDir(namespace),
    ...extra,
  };
  if (options.partitions !== undefined) env.KAFKA_TOPIC_PARTITIONS = String(options.partitions);
  return env;
}

/** Calls ingest's admin API; a non-2xx answer throws with its status and body. */
export function adminCaller(ingestUrl: string): (method: string, path: string, body: unknown) => Promise<void> {
  return async (method, path, body) => {
    const response = await fetch(`${ingestUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${await response.text()}`);
  };
}

export function deliveryLogDir(namespace: string): string {
  return join(tmpdir(), `tributary-${namespace}-delivery-log`);
}

export async function deleteNamespace(admin: Admin, namespace: string): Promise<void> {
  await rm(deliveryLogDir(namespace), { recursive: true, force: true });
  const ours = (await admin.listTopics()).filter((topic) => topic.startsWith(`${namespace}.`));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(namespace));
  if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
}
