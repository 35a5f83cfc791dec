/**
 * Sources and destinations with their health: each destination's circuit state and backlog
 * (from the dispatchers) and the delivery log's summary of the last hour. Settings are shown
 * without secrets: the API masks them, and the console leaves out header values and URL
 * credentials as well. Refreshes every 5 s.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { DestinationHealth, DestinationSummary } from '../api';
import { useApi } from '../api-context';
import { Badge, Empty, ErrorNote, Freshness, Loading, Section, StateBadge, Time } from '../components';
import { circuitLabel, displayUrl, formatCount, formatDuration, formatPercent, maskKey, NONE } from '../format';
import { useNow, useResource } from '../hooks';
import { Link } from '../navigation';
import { backlogTotal, destinationRows, destinationsOf, headerNames, signingOf, type DestinationRow } from '../overview';
import { hrefs } from '../route';

const REFRESH_MS = 5_000;

export function Destinations() {
  const api = useApi();
  const now = useNow();
  const config = useResource(async () => {
    const [sources, destinations] = await Promise.all([api.sources(), api.destinations()]);
    return { sources: sources.sources, destinations: destinations.destinations };
  }, [api], { refreshMs: REFRESH_MS });
  const health = useResource(() => api.destinationHealth(), [api], { refreshMs: REFRESH_MS });
  const summary = useResource(() => api.deliverySummary(), [api], { refreshMs: REFRESH_MS });

  if (!config.data) {
    return config.error ? <ErrorNote error={config.error} context="Could not load the configuration" /> : <Loading what="sources and destinations" />;
  }
  const { sources, destinations } = config.data;
  const rows = destinationRows(destinations, health.data?.destinations, summary.data?.destinations);

  return (
    <>
      <Section title="Destinations" actions={<Freshness loadedAt={health.loadedAt} now={now} loading={health.loading} />}>
        {config.error ? <ErrorNote error={config.error} context="Could not refresh the configuration" /> : null}
        {health.error ? <ErrorNote error={health.error} context="Destination health unavailable" /> : null}
        {summary.error ? <ErrorNote error={summary.error} context="Delivery summary (last hour) unavailable" /> : null}
        {rows.length === 0 ? <Empty>No destinations yet. Add one with the admin API or `tributary config apply`.</Empty> : <DestinationTable rows={rows} now={now} />}
      </Section>
      <Section title="Sources">
        {sources.length === 0 ? (
          <Empty>No sources yet.</Empty>
        ) : (
          <table class="grid">
            <thead>
              <tr>
                <th>Source</th>
                <th>Name</th>
                <th>Enabled</th>
                <th>Write key</th>
                <th>Destinations</th>
              </tr>
            </thead>
            <tbody>
              {sources.map((source) => {
                const fed = destinationsOf(source, destinations);
                return (
                  <tr key={source.id}>
                    <td>
                      <code>{source.id}</code>
                    </td>
                    <td>{source.name}</td>
                    <td>{source.enabled ? 'yes' : <Badge tone="warn">disabled</Badge>}</td>
                    <td>
                      <code title="shown by its ends only">{maskKey(source.writeKey)}</code>
                    </td>
                    <td>{fed.length > 0 ? fed.join(', ') : <span class="muted">none</span>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}

function DestinationTable({ rows, now }: { rows: DestinationRow[]; now: number }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <table class="grid destinations">
      <thead>
        <tr>
          <th>Destination</th>
          <th>Circuit</th>
          <th class="num" title="first attempts waiting / due retries / requests running">Backlog</th>
          <th class="num">Success (1 h)</th>
          <th class="num">Latency p50 / p95</th>
          <th class="num">Retries pending</th>
          <th class="num">Dead letters (1 h)</th>
          <th>Links</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const { destination, health, summary } = row;
          const expanded = open === destination.id;
          return (
            <Fragment key={destination.id}>
              <tr data-destination={destination.id} class={expanded ? 'expanded' : undefined}>
                <td>
                  <button type="button" class="link" aria-expanded={expanded} onClick={() => setOpen(expanded ? null : destination.id)}>
                    {expanded ? '▾' : '▸'} <strong>{destination.name}</strong>
                  </button>{' '}
                  {destination.name !== destination.id ? <code class="muted">{destination.id}</code> : null}
                  {destination.enabled ? null : <Badge tone="warn">disabled</Badge>}
                </td>
                <td class="circuit">
                  {health ? <StateBadge state={health.state} label={circuitLabel(health.state)} /> : <span class="muted">unknown</span>}
                </td>
                <td class="num" title={health ? backlogTitle(health) : undefined}>
                  {health ? formatCount(backlogTotal(health.backlog)) : NONE}
                </td>
                <td class="num success-rate">{summary ? formatPercent(summary.successRate) : NONE}</td>
                <td class="num">{summary ? `${formatDuration(summary.latency.deliveryP50Ms)} / ${formatDuration(summary.latency.deliveryP95Ms)}` : NONE}</td>
                <td class="num">{summary ? formatCount(summary.retriesPending) : NONE}</td>
                <td class="num">{summary ? formatCount(summary.deadLetters) : NONE}</td>
                <td class="links">
                  <Link href={hrefs.log({ destination: destination.id })}>log</Link> <Link href={hrefs.charts({ destination: destination.id })}>charts</Link>{' '}
                  <Link href={hrefs.deadLetters({ destination: destination.id })}>dead letters</Link>
                </td>
              </tr>
              {expanded ? (
                <tr class="details">
                  <td colSpan={8}>
                    <DestinationDetails row={row} now={now} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}

function backlogTitle(health: DestinationHealth): string {
  const { firstAttempts, retries, inFlight } = health.backlog;
  return `${firstAttempts} first attempts waiting, ${retries} due retries, ${inFlight} in flight`;
}

function DestinationDetails({ row, now }: { row: DestinationRow; now: number }) {
  const { destination, health, summary } = row;
  return (
    <div class="details-grid">
      <dl>
        <dt>Sources</dt>
        <dd>{destination.sources.length > 0 ? destination.sources.join(', ') : 'none'}</dd>
        <dt>Signing</dt>
        <dd>{signingOf(destination)}</dd>
        <dt>Webhook URLs</dt>
        <dd>
          <ol class="urls">
            {destination.settings.webhooks.map((webhook, index) => {
              const names = headerNames(webhook.headers);
              return (
                <li key={index}>
                  <code>{displayUrl(webhook.url)}</code>
                  {names.length > 0 ? <span class="muted"> — static headers: {names.join(', ')} (values not shown)</span> : null}
                </li>
              );
            })}
          </ol>
        </dd>
      </dl>
      {summary ? <SummaryFacts summary={summary} /> : null}
      {health && health.instances.length > 0 ? (
        <table class="grid compact">
          <thead>
            <tr>
              <th>Dispatcher</th>
              <th>Circuit</th>
              <th>Since</th>
              <th>Open until</th>
              <th class="num">Failures in a row</th>
              <th class="num">Deferred</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {health.instances.map((instance) => (
              <tr key={instance.instanceId} class={instance.stale ? 'stale' : undefined}>
                <td>
                  <code>{instance.instanceId}</code>
                  {instance.stale ? <Badge tone="neutral">stale</Badge> : null}
                </td>
                <td>
                  <StateBadge state={instance.state} label={circuitLabel(instance.state)} />
                </td>
                <td>
                  <Time iso={instance.stateSince} now={now} />
                </td>
                <td>
                  <Time iso={instance.openUntil} />
                </td>
                <td class="num">{formatCount(instance.consecutiveFailures)}</td>
                <td class="num">{formatCount(instance.deferrals)}</td>
                <td class="wrap">{instance.lastError ?? <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No dispatcher reports on this destination: nothing is in flight for it.</p>
      )}
    </div>
  );
}

function SummaryFacts({ summary }: { summary: DestinationSummary }) {
  return (
    <dl class="facts">
      <dt>Attempts (1 h)</dt>
      <dd>{formatCount(summary.attempts)}</dd>
      <dt>Delivered</dt>
      <dd>{formatCount(summary.delivered)}</dd>
      <dt>Failed</dt>
      <dd>{formatCount(summary.failed)}</dd>
      <dt>Deferred</dt>
      <dd>{formatCount(summary.deferred)}</dd>
      <dt>Attempt p50 / p95</dt>
      <dd>
        {formatDuration(summary.latency.attemptP50Ms)} / {formatDuration(summary.latency.attemptP95Ms)}
      </dd>
    </dl>
  );
}
