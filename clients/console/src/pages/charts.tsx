/**
 * Delivery rate and latency of one destination over a chosen range, from
 * `GET /destinations/{id}/timeline`, with the range's summary above. Refreshes every 15 s.
 */
import { useMemo } from 'preact/hooks';
import type { Timeline } from '../api';
import { useApi } from '../api-context';
import { Empty, ErrorNote, Loading, Section } from '../components';
import { LineChart, type LineSpec } from '../chart';
import { formatCount, formatDuration, formatPercent } from '../format';
import { useResource } from '../hooks';
import { navigate } from '../navigation';
import { hrefs, type Params } from '../route';
import { CHART_RANGES, chartRange, hasTraffic, rangeQuery, toSeries } from '../timeline';

const REFRESH_MS = 15_000;

export function Charts({ params }: { params: Params }) {
  const api = useApi();
  const destinations = useResource(() => api.destinations(), [api]);
  const ids = (destinations.data?.destinations ?? []).map((destination) => destination.id);
  const destination = params.destination ?? ids[0];
  const range = chartRange(params.range);

  const choose = (next: { destination?: string; range?: string }) =>
    navigate(hrefs.charts({ destination: next.destination ?? destination, range: next.range ?? range.key }), { replace: true });

  return (
    <>
      <Section title="Charts">
        <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Choose a destination and a range">
          <label for="chart-destination">Destination</label>
          <select id="chart-destination" value={destination ?? ''} onChange={(event) => choose({ destination: event.currentTarget.value })}>
            {ids.length === 0 && destination === undefined ? <option value="">no destinations</option> : null}
            {destination !== undefined && !ids.includes(destination) ? <option value={destination}>{destination}</option> : null}
            {ids.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
          <label for="chart-range">Range</label>
          <select id="chart-range" value={range.key} onChange={(event) => choose({ range: event.currentTarget.value })}>
            {CHART_RANGES.map((choice) => (
              <option key={choice.key} value={choice.key}>
                {choice.label}
              </option>
            ))}
          </select>
        </form>
        {destinations.error ? <ErrorNote error={destinations.error} context="Could not list destinations" /> : null}
        {destination === undefined && destinations.data ? <Empty>No destinations to chart yet.</Empty> : null}
      </Section>
      {destination !== undefined ? <DestinationCharts destinationId={destination} rangeKey={range.key} /> : null}
    </>
  );
}

function DestinationCharts({ destinationId, rangeKey }: { destinationId: string; rangeKey: string }) {
  const api = useApi();
  const range = chartRange(rangeKey);
  const timeline = useResource(() => api.timeline(destinationId, rangeQuery(range, Date.now())), [api, destinationId, range.key], { refreshMs: REFRESH_MS });
  const summary = useResource(
    () => {
      const { since, until } = rangeQuery(range, Date.now());
      return api.destinationSummary(destinationId, { since, until });
    },
    [api, destinationId, range.key],
    { refreshMs: REFRESH_MS },
  );

  return (
    <>
      <Section title={`${destinationId}, ${range.label}`}>
        {summary.error ? <ErrorNote error={summary.error} context="Summary unavailable" /> : null}
        {summary.data ? (
          <dl class="facts summary">
            <dt>Attempts</dt>
            <dd>{formatCount(summary.data.attempts)}</dd>
            <dt>Success rate</dt>
            <dd>{formatPercent(summary.data.successRate)}</dd>
            <dt>Delivery p50 / p95</dt>
            <dd>
              {formatDuration(summary.data.latency.deliveryP50Ms)} / {formatDuration(summary.data.latency.deliveryP95Ms)}
            </dd>
            <dt>Retries pending</dt>
            <dd>{formatCount(summary.data.retriesPending)}</dd>
            <dt>Dead letters</dt>
            <dd>{formatCount(summary.data.deadLetters)}</dd>
          </dl>
        ) : null}
      </Section>
      <Section title="Delivery rate and latency">
        {timeline.error ? <ErrorNote error={timeline.error} context="Timeline unavailable" /> : null}
        {timeline.data ? <TimelineCharts timeline={timeline.data} /> : timeline.error ? null : <Loading what="the timeline" />}
      </Section>
    </>
  );
}

function TimelineCharts({ timeline }: { timeline: Timeline }) {
  const series = useMemo(() => toSeries(timeline), [timeline]);
  const rateLines = useMemo<LineSpec[]>(
    () => [
      { label: 'attempts', color: '#1f4e79', values: series.attemptsPerMin },
      { label: 'delivered', color: '#2e7d32', values: series.deliveredPerMin },
      { label: 'failed', color: '#c62828', values: series.failedPerMin },
      { label: 'deferred', color: '#ef8f00', values: series.deferredPerMin, dash: [6, 4] },
    ],
    [series],
  );
  const latencyLines = useMemo<LineSpec[]>(
    () => [
      { label: 'delivery p50', color: '#1f4e79', values: series.p50Ms },
      { label: 'delivery p95', color: '#8e24aa', values: series.p95Ms },
    ],
    [series],
  );
  if (!hasTraffic(series)) return <Empty>No attempts to this destination in this range.</Empty>;
  return (
    <div class="charts">
      <LineChart title="Delivery rate (per minute)" times={series.times} lines={rateLines} unit="/min" />
      <LineChart title="Delivery latency, receipt to 2xx" times={series.times} lines={latencyLines} unit="ms" />
    </div>
  );
}
