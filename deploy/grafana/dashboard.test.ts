/**
 * deploy/grafana/tributary-overview.json: valid for Grafana 10+ import and provisioning,
 * every panel queries something, every query selects a series Tributary exposes, and every
 * metric Tributary exposes is on a panel.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../local/paths.js';
import { ALL_METRICS, SERVICES } from '../observability/metrics.js';
import { selectorProblems, seriesSelectors } from '../observability/promql.js';

const grafanaDir = join(repoRoot, 'deploy', 'grafana');
const dashboardText = readFileSync(join(grafanaDir, 'tributary-overview.json'), 'utf8');

interface Target {
  refId: string;
  expr?: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { uid: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(dashboardText) as Dashboard;
const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
const rows = dashboard.panels.filter((panel) => panel.type === 'row');
const DATASOURCE = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };

/** The series selector inside a `label_values(selector, label)` variable query. */
function labelValuesSelector(query: string): string {
  const match = /^label_values\((.+),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$/.exec(query.trim());
  if (!match?.[1]) throw new Error(`not a label_values(selector, label) query: ${query}`);
  return match[1];
}

describe('tributary-overview.json', () => {
  it('is a Grafana 10+ dashboard with a stable uid', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(38);
    expect(dashboard.uid).toBe('tributary-overview');
    expect(dashboard.title).toBeTruthy();
  });

  it('takes the Prometheus data source and the service from variables', () => {
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(variables.get('DS_PROMETHEUS')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(variables.get('service')).toMatchObject({ type: 'query', datasource: DATASOURCE });
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual(DATASOURCE);
      for (const target of panel.targets ?? []) expect(target.datasource, panel.title).toEqual(DATASOURCE);
    }
  });

  it('gives every panel a query, filtered by the service variable', () => {
    for (const panel of panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect(target.expr?.trim(), `${panel.title} ${target.refId}`).toBeTruthy();
        expect(target.expr, `${panel.title} ${target.refId}`).toContain('service=~"$service"');
      }
    }
  });

  it('puts delivery latency p50/p95/p99 first, then the rows the brief lists', () => {
    const headline = panels.find((panel) => panel.gridPos.x === 0 && panel.gridPos.y === 0);
    expect(headline?.title).toMatch(/^Delivery latency/);
    expect(headline?.targets?.map((t) => /histogram_quantile\(([\d.]+), .*tributary_delivery_latency_seconds_bucket/.exec(t.expr ?? '')?.[1])).toEqual([
      '0.5',
      '0.95',
      '0.99',
    ]);
    expect(rows.map((row) => row.title)).toEqual([
      'Ingest',
      'Router',
      'Delivery',
      'Destinations',
      'Retries and dead letters',
      'Delivery log',
      'Kafka consumer lag',
      'Process',
    ]);
  });

  it("shows the delivery log's lag per partition, records indexed by topic, write p95 and database errors", () => {
    const row = rows.find((r) => r.title === 'Delivery log');
    const next = rows.find((r) => row !== undefined && r.gridPos.y > row.gridPos.y);
    const inRow = panels.filter((p) => row !== undefined && next !== undefined && p.gridPos.y > row.gridPos.y && p.gridPos.y < next.gridPos.y);
    const exprs = inRow.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
    // The indexer's own group (<ns>-indexer), one line per topic and partition.
    expect(exprs).toContainEqual(expect.stringMatching(/^max by \(namespace, topic, partition\) \(tributary_consumer_lag\{[^}]*group=~"\.\+-indexer"\}\)$/));
    expect(exprs).toContainEqual(expect.stringMatching(/^sum by \(topic\) \(rate\(tributary_indexer_records_total\{/));
    expect(exprs).toContainEqual(expect.stringMatching(/^histogram_quantile\(0\.95, sum by \(le\) \(rate\(tributary_indexer_batch_write_duration_seconds_bucket\{/));
    expect(exprs).toContainEqual(expect.stringMatching(/^sum by \(kind\) \(rate\(tributary_indexer_database_errors_total\{/));
  });

  it('offers every service in the namespace and service variables', () => {
    for (const variable of dashboard.templating.list.filter((v) => v.name === 'namespace' || v.name === 'service')) {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
      const listed = /service=~"([^"$]+)"/.exec(query)?.[1]?.split('|');
      expect(listed?.sort(), variable.name).toEqual([...SERVICES].sort());
    }
  });

  it('lays panels out without overlaps and with unique ids', () => {
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    const cells = new Set<string>();
    for (const { gridPos, title } of dashboard.panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('queries only series Tributary exposes, with their labels', () => {
    const expressions = [
      ...panels.flatMap((panel) => (panel.targets ?? []).map((t) => ({ where: panel.title, expr: t.expr ?? '' }))),
      ...dashboard.templating.list
        .filter((v) => v.type === 'query')
        .map((v) => ({ where: `variable ${v.name}`, expr: labelValuesSelector(typeof v.query === 'string' ? v.query : v.query.query) })),
    ];
    const problems = expressions.flatMap(({ where, expr }) =>
      seriesSelectors(expr).flatMap((selector) => selectorProblems(selector, ALL_METRICS).map((problem) => `${where}: ${problem}`)),
    );
    expect(problems).toEqual([]);
  });

  it('shows every metric in the list somewhere', () => {
    const used = new Set(
      panels.flatMap((panel) => (panel.targets ?? []).flatMap((t) => seriesSelectors(t.expr ?? '').map((s) => s.name.replace(/_(bucket|sum|count)$/, '')))),
    );
    expect(ALL_METRICS.map((m) => m.name).filter((name) => !used.has(name))).toEqual([]);
  });

  it('is copied unchanged into the Helm chart', () => {
    const chartFiles = join(repoRoot, 'deploy', 'helm', 'tributary', 'files');
    const dashboards = readdirSync(grafanaDir).filter((f) => f.endsWith('.json'));
    expect(readdirSync(chartFiles).filter((f) => f.endsWith('.json'))).toEqual(dashboards);
    for (const file of dashboards) {
      expect(readFileSync(join(chartFiles, file), 'utf8'), `run: cp deploy/grafana/${file} deploy/helm/tributary/files/`).toBe(
        readFileSync(join(grafanaDir, file), 'utf8'),
      );
    }
  });
});

describe('provisioning/dashboards/tributary.yaml', () => {
  it('is a file provider for Grafana', () => {
    const provisioning = parse(readFileSync(join(grafanaDir, 'provisioning', 'dashboards', 'tributary.yaml'), 'utf8')) as {
      apiVersion: number;
      providers: { type: string; options: { path: string } }[];
    };
    expect(provisioning.apiVersion).toBe(1);
    expect(provisioning.providers).toHaveLength(1);
    expect(provisioning.providers[0]).toMatchObject({ type: 'file', options: { path: expect.stringMatching(/^\//) } });
  });
});
