/**
 * deploy/prometheus/tributary-rules.yaml, checked by a real promtool (built from the Go
 * module proxy on first use, see tests/go-tools.ts): `check rules` for syntax and
 * `test rules` for behaviour (tributary-rules.test.yaml), plus the checks promtool cannot
 * make: every series is one Tributary exposes, and the chart's copy is identical.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCommand } from '../local/java.js';
import { repoRoot } from '../local/paths.js';
import { ALL_METRICS } from '../observability/metrics.js';
import { selectorProblems, seriesSelectors } from '../observability/promql.js';
import { ensureGoTool, PROMTOOL } from '../tests/go-tools.js';

const rulesDir = join(repoRoot, 'deploy', 'prometheus');
const rulesPath = join(rulesDir, 'tributary-rules.yaml');
const rulesText = readFileSync(rulesPath, 'utf8');

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const { groups } = parse(rulesText) as { groups: { name: string; rules: Rule[] }[] };
const rules = groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule) => rule.alert !== undefined);

let promtool: string;

beforeAll(async () => {
  promtool = (await ensureGoTool(PROMTOOL)).path;
}, 30 * 60_000);

describe('promtool', () => {
  it('checks the rule file', async () => {
    const result = await runCommand(promtool, ['check', 'rules', rulesPath]);
    expect(result.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(result.code).toBe(0);
  });

  it('passes the rule unit tests', async () => {
    const result = await runCommand(promtool, ['test', 'rules', 'tributary-rules.test.yaml'], { cwd: rulesDir });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('SUCCESS');
  });
});

describe('tributary-rules.yaml', () => {
  it("records delivery latency p50/p95/p99, delivered/s and the delivery log's backlog", () => {
    expect(rules.map((rule) => rule.record).filter(Boolean)).toEqual([
      'namespace:tributary_delivery_latency_seconds:p50_5m',
      'namespace:tributary_delivery_latency_seconds:p95_5m',
      'namespace:tributary_delivery_latency_seconds:p99_5m',
      'namespace:tributary_delivered:rate5m',
      'namespace_topic:tributary_indexer_consumer_lag:sum',
    ]);
  });

  it('alerts on latency, dead letters, quarantined records, open circuits, retries, consumer lag, the delivery log, ingest errors and targets down', () => {
    expect(alerts.map((rule) => rule.alert)).toEqual([
      'TributaryDeliveryLatencyHigh',
      'TributaryDeadLettersIncreasing',
      'TributaryRecordsQuarantined',
      'TributaryDestinationCircuitOpen',
      'TributaryRetriesPilingUp',
      'TributaryRetryReleaseLate',
      'TributaryConsumerLagHigh',
      'TributaryDeliveryLogFallingBehind',
      'TributaryDeliveryLogNotIndexing',
      'TributaryDeliveryLogDatabaseFailing',
      'TributaryIngestErrors',
      'TributaryServiceDown',
    ]);
    for (const alert of alerts) {
      expect(alert.labels?.['severity'], alert.alert).toMatch(/^(warning|critical)$/);
      expect(alert.annotations?.['summary'], alert.alert).toBeTruthy();
      expect(alert.annotations?.['description'], alert.alert).toBeTruthy();
    }
  });

  it('selects only series Tributary exposes, with their labels', () => {
    const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
    const problems = rules.flatMap((rule) =>
      seriesSelectors(rule.expr).flatMap((selector) => selectorProblems(selector, ALL_METRICS, recorded).map((p) => `${rule.record ?? rule.alert}: ${p}`)),
    );
    expect(problems).toEqual([]);
  });

  it('is copied unchanged into the Helm chart', () => {
    const copy = readFileSync(join(repoRoot, 'deploy', 'helm', 'tributary', 'files', 'tributary-rules.yaml'), 'utf8');
    expect(copy, 'run: cp deploy/prometheus/tributary-rules.yaml deploy/helm/tributary/files/').toBe(rulesText);
  });
});
