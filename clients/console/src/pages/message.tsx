/**
 * "What happened to message X": the message as ingest accepted it, the router's decision per
 * destination, each delivery's state, and every attempt on a timeline with its per-URL
 * results and the first bytes of each response. While a delivery is unsettled, or the
 * indexer has not reached the message yet, the page refreshes itself every 2 s.
 */
import { ApiError, type Attempt, type MessageDetail } from '../api';
import { useApi } from '../api-context';
import { Badge, Empty, ErrorNote, JsonBlock, Loading, Section, StateBadge, Time } from '../components';
import { attemptAnswer, formatDuration, formatTime, NONE, prettyJson, statusTone } from '../format';
import { useResource } from '../hooks';
import { isSettled, sinceReceived, timelines, truncationNote, type DeliveryTimeline } from '../message-view';
import { Link } from '../navigation';
import { hrefs } from '../route';

const REFRESH_MS = 2_000;

function stillChanging(detail: MessageDetail | undefined, error: Error | undefined): boolean {
  if (error) return error instanceof ApiError && (error.code === 'not_found' || error.status === 503);
  return detail !== undefined && !isSettled(detail);
}

export function MessageView({ messageId }: { messageId: string }) {
  const api = useApi();
  const detail = useResource(() => api.message(messageId), [api, messageId], { refreshMs: REFRESH_MS, refreshWhile: stillChanging });
  const refreshing = stillChanging(detail.data, detail.error);

  return (
    <>
      <Section
        title="Message"
        actions={
          <>
            {refreshing ? <span class="muted">refreshing every 2 s</span> : null}
            <button type="button" onClick={detail.reload}>
              Refresh
            </button>
          </>
        }
      >
        <p class="message-id">
          <code>{messageId}</code> · <Link href={hrefs.log({ messageId })}>its attempts in the delivery log</Link>
        </p>
        {detail.error ? (
          detail.error instanceof ApiError && detail.error.code === 'not_found' ? (
            <Empty>
              {detail.error.message}. A message that just arrived may not be indexed yet; this page checks again every 2 s.
            </Empty>
          ) : (
            <ErrorNote error={detail.error} context="The delivery log did not answer" />
          )
        ) : null}
        {!detail.data && !detail.error ? <Loading what="the message" /> : null}
        {detail.data ? <MessageBodies detail={detail.data} /> : null}
      </Section>
      {detail.data ? <Routing detail={detail.data} /> : null}
      {detail.data ? <Deliveries detail={detail.data} /> : null}
    </>
  );
}

function MessageBodies({ detail }: { detail: MessageDetail }) {
  if (detail.messages.length === 0) return <Empty>The message itself is not in the log (only its attempts are).</Empty>;
  return (
    <>
      {detail.messages.map((message) => (
        <div key={message.sourceId} class="message-body">
          <dl class="facts">
            <dt>Source</dt>
            <dd>{message.sourceId}</dd>
            <dt>Type</dt>
            <dd>{message.type}</dd>
            {message.event ? (
              <>
                <dt>Event</dt>
                <dd>{message.event}</dd>
              </>
            ) : null}
            <dt>User</dt>
            <dd>{message.userId ?? (message.anonymousId ? `anonymous ${message.anonymousId}` : NONE)}</dd>
            <dt>Received (UTC)</dt>
            <dd>{formatTime(message.receivedAt)}</dd>
            <dt>Timestamp (UTC)</dt>
            <dd>{formatTime(message.timestamp)}</dd>
          </dl>
          <details open={detail.messages.length === 1}>
            <summary>Message JSON</summary>
            <JsonBlock value={prettyJson(message.message)} />
          </details>
        </div>
      ))}
    </>
  );
}

function Routing({ detail }: { detail: MessageDetail }) {
  return (
    <Section title="Routing">
      {detail.routing.length === 0 ? (
        <Empty>No routing decision recorded.</Empty>
      ) : (
        <table class="grid routing">
          <thead>
            <tr>
              <th>Source</th>
              <th>Destination</th>
              <th>Decision</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {detail.routing.map((decision) => (
              <tr key={`${decision.sourceId}/${decision.destinationId ?? ''}`}>
                <td>{decision.sourceId}</td>
                <td>{decision.destinationId ?? <span class="muted">none</span>}</td>
                <td>
                  <StateBadge state={decision.decision} />
                </td>
                <td>{decision.reason ?? <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function Deliveries({ detail }: { detail: MessageDetail }) {
  const all = timelines(detail);
  const truncated = truncationNote(detail);
  return (
    <Section title="Deliveries and attempts">
      {truncated ? (
        <p class="muted hint" role="note" data-truncated="true">
          {truncated}
        </p>
      ) : null}
      {all.length === 0 ? <Empty>No deliveries: no destination was routed this message.</Empty> : all.map((timeline) => <DeliveryCard key={timeline.deliveryId} timeline={timeline} />)}
    </Section>
  );
}

function DeliveryCard({ timeline }: { timeline: DeliveryTimeline }) {
  const { delivery } = timeline;
  return (
    <article class="delivery" data-delivery={timeline.deliveryId}>
      <header class="delivery-head">
        <h3>{timeline.destinationId}</h3>
        <StateBadge state={delivery?.state ?? 'unknown'} />
        {delivery ? (
          <span class="muted">
            {delivery.attempts} attempt{delivery.attempts === 1 ? '' : 's'}
            {delivery.latencyMs !== null ? ` · delivered ${formatDuration(delivery.latencyMs)} after receipt` : ''}
            {delivery.nextAttemptAt ? ` · next attempt ${formatTime(delivery.nextAttemptAt)}` : ''}
          </span>
        ) : null}
      </header>
      {timeline.attempts.length === 0 ? (
        <Empty>No attempt yet.</Empty>
      ) : (
        <ol class="timeline" aria-label={`Attempts to ${timeline.destinationId}`}>
          {timeline.attempts.map((attempt) => (
            <AttemptItem key={attempt.id} attempt={attempt} />
          ))}
        </ol>
      )}
    </article>
  );
}

function AttemptItem({ attempt }: { attempt: Attempt }) {
  const offset = sinceReceived(attempt);
  return (
    <li class={`attempt tone-${attempt.outcome}`} data-attempt={attempt.attempt} data-outcome={attempt.outcome} data-status={attempt.status ?? ''}>
      <div class="attempt-head">
        <strong>{attempt.kind === 'attempt' ? `Attempt ${attempt.attempt}` : attempt.kind === 'deferred' ? 'Deferred' : 'Pre-flight'}</strong>
        <StateBadge state={attempt.outcome} />
        <Badge tone={statusTone(attempt.status)}>{attemptAnswer(attempt)}</Badge>
        <span>
          <Time iso={attempt.startedAt} />
          {offset !== null ? <span class="muted"> (+{formatDuration(offset)} after receipt)</span> : null}
        </span>
        <span class="muted">took {formatDuration(attempt.durationMs)}</span>
      </div>
      <div class="attempt-facts muted">
        {attempt.lane ? `lane ${attempt.lane}` : null}
        {attempt.tier ? ` · retry tier ${attempt.tier}` : null}
        {attempt.nextAttemptAt ? ` · next attempt ${formatTime(attempt.nextAttemptAt)}` : null}
        {attempt.deferReason ? ` · deferred: ${attempt.deferReason}` : null}
        {attempt.deadReason ? ` · dead: ${attempt.deadReason}` : null}
        {attempt.replays > 0 ? ` · replay ${attempt.replays}` : null}
      </div>
      {attempt.targets.length > 0 ? (
        <table class="grid compact targets">
          <thead>
            <tr>
              <th>URL</th>
              <th>Result</th>
              <th>Status / error</th>
              <th class="num">Took</th>
              <th>Response (first bytes)</th>
            </tr>
          </thead>
          <tbody>
            {attempt.targets.map((target) => (
              <tr key={target.urlIndex}>
                <td>
                  webhooks[{target.urlIndex}] <code>{target.origin}</code>
                </td>
                <td>
                  <Badge tone={target.outcome === 'success' ? 'good' : 'bad'}>{target.outcome}</Badge>
                </td>
                <td class="wrap">
                  {target.status ?? ''}
                  {target.error && target.error !== `HTTP ${target.status}` ? ` ${target.error}` : ''}
                  {target.retryAfterMs !== null ? ` (Retry-After ${formatDuration(target.retryAfterMs)})` : ''}
                </td>
                <td class="num">{formatDuration(target.durationMs)}</td>
                <td>{target.responseBody ? <pre class="response">{target.responseBody}</pre> : <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </li>
  );
}
