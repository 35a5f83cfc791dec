/**
 * Just enough PromQL reading to find which series an expression selects and which labels
 * its matchers name, so the dashboards and rules can be checked against the metric list.
 * promtool validates syntax; this answers the question promtool cannot: "does this series
 * exist in Tributary?". It understands the subset deploy/ writes: selectors with matchers,
 * range and subquery brackets, function calls, aggregations with by/without, vector
 * matching with on/ignoring/group_left/group_right, and Grafana `$variables`.
 */
import { SCRAPE_METRICS, TARGET_LABELS, type MetricDefinition } from './metrics.js';

export interface SeriesSelector {
  name: string;
  /** Label names used in the selector's `{…}` matchers. */
  matcherLabels: string[];
}

const KEYWORDS = new Set([
  'sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile',
  'limitk', 'limit_ratio', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset',
  'and', 'or', 'unless', 'atan2', 'inf', 'nan',
]);
/** Keywords followed by a parenthesised list of label names rather than an expression. */
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

const IDENTIFIER_START = /[A-Za-z_:]/;
const IDENTIFIER_PART = /[A-Za-z0-9_:]/;

function skipString(expr: string, start: number): number {
  const quote = expr[start];
  let i = start + 1;
  while (i < expr.length && expr[i] !== quote) i += expr[i] === '\\' ? 2 : 1;
  return i + 1;
}

function skipPast(expr: string, start: number, close: string): number {
  let i = start;
  while (i < expr.length && expr[i] !== close) {
    const c = expr[i];
    i = c === '"' || c === "'" || c === '`' ? skipString(expr, i) : i + 1;
  }
  return i + 1;
}

function nextNonSpace(expr: string, start: number): number {
  let i = start;
  while (i < expr.length && /\s/.test(expr[i] ?? '')) i++;
  return i;
}

function matcherLabelsOf(body: string): string[] {
  const labels: string[] = [];
  const pattern = /([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/g;
  for (const m of body.matchAll(pattern)) if (m[1]) labels.push(m[1]);
  return labels;
}

/** Every series selector in a PromQL expression, in order of appearance. */
export function seriesSelectors(expr: string): SeriesSelector[] {
  const selectors: SeriesSelector[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] ?? '';
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(expr, i);
      continue;
    }
    if (c === '#') {
      i = skipPast(expr, i, '\n');
      continue;
    }
    // Range and subquery durations, including Grafana's [$__rate_interval].
    if (c === '[') {
      i = skipPast(expr, i, ']');
      continue;
    }
    // A variable such as $service outside a string is a Grafana macro, not a metric.
    if (c === '$') {
      i++;
      while (i < expr.length && IDENTIFIER_PART.test(expr[i] ?? '')) i++;
      continue;
    }
    if (c === '{') {
      // A bare `{…}` selector without a metric name; deploy/ never writes one.
      i = skipPast(expr, i, '}');
      continue;
    }
    const previous = i > 0 ? (expr[i - 1] ?? '') : '';
    if (!IDENTIFIER_START.test(c) || IDENTIFIER_PART.test(previous)) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < expr.length && IDENTIFIER_PART.test(expr[end] ?? '')) end++;
    const word = expr.slice(i, end);
    const after = nextNonSpace(expr, end);
    if (LABEL_LIST_KEYWORDS.has(word.toLowerCase())) {
      i = expr[after] === '(' ? skipPast(expr, after, ')') : end;
      continue;
    }
    if (KEYWORDS.has(word.toLowerCase()) || expr[after] === '(') {
      i = end;
      continue;
    }
    if (expr[after] === '{') {
      const close = skipPast(expr, after, '}');
      selectors.push({ name: word, matcherLabels: matcherLabelsOf(expr.slice(after + 1, close - 1)) });
      i = close;
    } else {
      selectors.push({ name: word, matcherLabels: [] });
      i = end;
    }
  }
  return selectors;
}

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;

/**
 * What is wrong with one selector given the known metrics and the names recording rules
 * define; an empty list means it is fine. Recorded series keep their source labels, so
 * their matchers are checked against the target labels only loosely (any label allowed).
 */
export function selectorProblems(
  selector: SeriesSelector,
  metrics: readonly MetricDefinition[],
  recorded: ReadonlySet<string> = new Set(),
): string[] {
  if (recorded.has(selector.name) || SCRAPE_METRICS.includes(selector.name)) return [];
  let definition = metrics.find((m) => m.name === selector.name);
  let bucket = false;
  if (!definition) {
    for (const suffix of HISTOGRAM_SUFFIXES) {
      if (!selector.name.endsWith(suffix)) continue;
      const base = selector.name.slice(0, -suffix.length);
      definition = metrics.find((m) => m.name === base && m.type === 'histogram');
      bucket = suffix === '_bucket';
      if (definition) break;
    }
  }
  if (!definition) return [`unknown metric ${selector.name}`];
  if (definition.type === 'histogram' && definition.name === selector.name) {
    return [`${selector.name} is a histogram: select ${selector.name}_bucket, _sum or _count`];
  }
  const allowed = new Set([...definition.labels, ...TARGET_LABELS, ...(bucket ? ['le'] : [])]);
  return selector.matcherLabels.filter((label) => !allowed.has(label)).map((label) => `${selector.name} has no label ${label}`);
}
