/**
 * The charts page's arithmetic: the ranges a person can pick (each with a bucket size that
 * keeps well under the API's 1,000 buckets and gives a readable line), and a timeline
 * answer turned into the column arrays uPlot draws — counts per bucket become rates per
 * minute, so ranges with different buckets read on one scale.
 */
import type { Timeline } from './api';

export interface ChartRange {
  key: string;
  label: string;
  ms: number;
  /** The API's bucket duration for this range. */
  bucket: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const CHART_RANGES: readonly ChartRange[] = [
  { key: '15m', label: 'last 15 minutes', ms: 15 * MINUTE, bucket: '10s' },
  { key: '1h', label: 'last hour', ms: HOUR, bucket: '1m' },
  { key: '6h', label: 'last 6 hours', ms: 6 * HOUR, bucket: '5m' },
  { key: '24h', label: 'last 24 hours', ms: 24 * HOUR, bucket: '15m' },
  { key: '7d', label: 'last 7 days', ms: 7 * 24 * HOUR, bucket: '2h' },
];

export const DEFAULT_RANGE = '1h';

export function chartRange(key: string | undefined): ChartRange {
  return CHART_RANGES.find((range) => range.key === key) ?? CHART_RANGES.find((range) => range.key === DEFAULT_RANGE)!;
}

/** The absolute window of a range ending now, as the timeline query takes it. */
export function rangeQuery(range: ChartRange, now: number): { since: string; until: string; bucket: string } {
  return { since: new Date(now - range.ms).toISOString(), until: new Date(now).toISOString(), bucket: range.bucket };
}

/** Columns for uPlot: x in Unix seconds, then one array per line; null leaves a gap. */
export interface ChartSeries {
  times: number[];
  attemptsPerMin: number[];
  deliveredPerMin: number[];
  failedPerMin: number[];
  deferredPerMin: number[];
  p50Ms: Array<number | null>;
  p95Ms: Array<number | null>;
}

export function toSeries(timeline: Timeline): ChartSeries {
  const perMinute = (count: number) => (timeline.bucketMs > 0 ? (count * MINUTE) / timeline.bucketMs : count);
  const series: ChartSeries = { times: [], attemptsPerMin: [], deliveredPerMin: [], failedPerMin: [], deferredPerMin: [], p50Ms: [], p95Ms: [] };
  const buckets = [...timeline.buckets].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  for (const bucket of buckets) {
    series.times.push(Date.parse(bucket.at) / 1_000);
    series.attemptsPerMin.push(perMinute(bucket.attempts));
    series.deliveredPerMin.push(perMinute(bucket.delivered));
    series.failedPerMin.push(perMinute(bucket.failed));
    series.deferredPerMin.push(perMinute(bucket.deferred));
    series.p50Ms.push(bucket.deliveryP50Ms);
    series.p95Ms.push(bucket.deliveryP95Ms);
  }
  return series;
}

/** Whether a timeline has anything to draw; an empty chart gets a sentence instead. */
export function hasTraffic(series: ChartSeries): boolean {
  return series.attemptsPerMin.some((value) => value > 0) || series.deferredPerMin.some((value) => value > 0);
}
