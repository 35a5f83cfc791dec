/**
 * The metric list the Grafana dashboard and the Prometheus rules are checked against
 * (deploy/observability/metrics.ts) is what the running services serve: every metric each
 * service is listed for is at its /metrics with that type, and every sample of a listed metric
 * carries exactly the listed labels. A renamed metric or label then breaks this test instead of
 * silently emptying a panel or disarming an alert. All five services as processes, real broker
 * and registry, a few events delivered so that labelled series have samples.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_METRICS, SERVICES, type MetricDefinition } from '@tributary/deploy/observability';
import { eventually, stackEnv, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { ADMIN_TOKEN, Receiver, RetryPipeline } from './retry-pipeline.js';

/** Labels every series may carry besides its own: prom-client's default label, histogram buckets. */
const COMMON_LABELS = new Set(['service', 'le']);

interface Exposed {
  types: Map<string, string>;
  /** Label names of each sample, by metric name (histogram samples under the histogram's name). */
  samples: Map<string, Array<Set<string>>>;
}

function parseExposition(text: string): Exposed {
  const types = new Map<string, string>();
  const samples = new Map<string, Array<Set<string>>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('#') || line.trim() === '') continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
    if (!sample) continue;
    const name = types.has(sample[1]!) ? sample[1]! : sample[1]!.replace(/_(bucket|sum|count)$/, '');
    const labels = new Set([...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((match) => match[1]!));
    samples.set(name, [...(samples.get(name) ?? []), labels]);
  }
  return { types, samples };
}

function problems(service: string, exposed: Exposed, definitions: readonly MetricDefinition[]): string[] {
  const found: string[] = [];
  for (const definition of definitions.filter((d) => (d.services as readonly string[]).includes(service))) {
    const type = exposed.types.get(definition.name);
    if (type === undefined) {
      found.push(`${service}: ${definition.name} is not served`);
      continue;
    }
    if (type !== definition.type) found.push(`${service}: ${definition.name} is a ${type}, listed as a ${definition.type}`);
    const listed = new Set(definition.labels);
    for (const labels of exposed.samples.get(definition.name) ?? []) {
      const own = [...labels].filter((label) => !COMMON_LABELS.has(label)).sort();
      if (own.join(',') !== [...listed].sort().join(',')) {
        found.push(`${service}: ${definition.name} has labels {${own.join(', ')}}, listed with {${[...listed].join(', ')}}`);
        break;
      }
    }
  }
  return found;
}

describe('the metric list deploy/ is checked against', () => {
  const namespace = uniqueNamespace('e2e-metrics');
  const pipeline = new RetryPipeline(namespace, { RETRY_LADDER: '200ms,400ms', RETRY_WINDOW: '1m' });
  const receiver = new Receiver((_messageId, attempt) => (attempt === 1 ? 503 : 200));
  let indexer: RunningService | undefined;
  let dataDir: string | undefined;

  beforeAll(async () => {
    await receiver.start();
    await pipeline.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-metrics-contract-'));
    indexer = await startService('indexer', { env: { ...stackEnv(namespace), ADMIN_TOKEN, DELIVERY_LOG_DATA_DIR: dataDir, INSTANCE_ID: 'e2e-indexer' } });
  });

  afterAll(async () => {
    await indexer?.stop();
    await pipeline.stop();
    await receiver.stop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is what the five services serve at /metrics, types and labels', { timeout: 90_000 }, async () => {
    const writeKey = await pipeline.connect('metrics', receiver.url);
    // A 503 first: retries scheduled and released, then delivered — most labelled series get samples.
    const messageIds = await pipeline.track(writeKey, 3);
    await eventually(() => messageIds.every((id) => receiver.attemptsFor(id).some((attempt) => attempt.status === 200)), 'every event delivered after its retry', 30_000);

    const urls: Record<string, string> = Object.fromEntries([...pipeline.services].map(([name, service]) => [name, service.url]));
    urls['indexer'] = indexer!.url;
    expect(Object.keys(urls).sort()).toEqual([...SERVICES].sort());
    const found: string[] = [];
    for (const [service, url] of Object.entries(urls)) {
      const response = await fetch(`${url}/metrics`);
      expect(response.status, service).toBe(200);
      found.push(...problems(service, parseExposition(await response.text()), ALL_METRICS));
    }
    expect(found).toEqual([]);
  });
});
