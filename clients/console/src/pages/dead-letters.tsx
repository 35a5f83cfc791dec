/**
 * Dead letters (`GET /dlq`, newest first, paged by the API's cursor) with their filters in the
 * URL, and replay (`POST /dlq/replay`) of one destination's matching dead letters: a dry run
 * says how many would go, and only its confirmation sends them.
 */
import { useEffect, useReducer, useState } from 'preact/hooks';
import { DEAD_LETTER_REASONS, type DeadLetter, type DeadLetterQuery, type DeadLetterReason } from '../api';
import { useApi } from '../api-context';
import { Badge, Empty, ErrorNote, Loading, Section } from '../components';
import { formatCount, formatTime, NONE, shortId } from '../format';
import { useResource } from '../hooks';
import { currentCursor, FIRST_PAGE, newerPage, olderPage, pageNumber, type CursorTrail } from '../log-query';
import { Link, navigate } from '../navigation';
import { describeReplay, IDLE, pendingRequest, replayStep } from '../replay';
import { hrefs, type Params } from '../route';

const LIST_LIMIT = 100;

interface DeadLetterFilter {
  destination: string;
  reason: string;
  since: string;
}

function isReason(value: string): value is DeadLetterReason {
  return (DEAD_LETTER_REASONS as readonly string[]).includes(value);
}

function toQuery(filter: DeadLetterFilter, before: string | undefined): DeadLetterQuery {
  const query: DeadLetterQuery = { limit: LIST_LIMIT };
  if (filter.destination) query.destination = filter.destination;
  if (filter.since) query.since = filter.since;
  if (isReason(filter.reason)) query.reason = filter.reason;
  // The cursor holds no filter: each page is asked for with the same ones.
  if (before) query.before = before;
  return query;
}

export function DeadLetters({ params }: { params: Params }) {
  const api = useApi();
  const applied: DeadLetterFilter = { destination: params.destination ?? '', reason: params.reason ?? '', since: params.since ?? '' };
  const appliedKey = JSON.stringify(applied);
  // The app mounts this page afresh for each URL, so the form starts from the URL's filters.
  const [draft, setDraft] = useState(applied);
  const [listCount, setListCount] = useState(0);
  // A new filter is a new URL, which mounts the page afresh: the trail starts at the first page.
  const [trail, setTrail] = useState<CursorTrail>(FIRST_PAGE);
  const before = currentCursor(trail);

  const destinations = useResource(() => api.destinations(), [api]);
  const list = useResource(() => api.deadLetters(toQuery(applied, before)), [api, appliedKey, listCount, before]);
  const page = pageNumber(trail);

  const apply = (event: Event) => {
    event.preventDefault();
    setListCount((count) => count + 1);
    navigate(hrefs.deadLetters({ ...draft }));
  };

  return (
    <>
      <Section title="Dead letters">
        <form class="filters" onSubmit={apply} aria-label="Filter dead letters">
          <label for="dlq-destination">Destination</label>
          <select id="dlq-destination" value={draft.destination} onChange={(event) => setDraft({ ...draft, destination: event.currentTarget.value })}>
            <option value="">any</option>
            {(destinations.data?.destinations ?? []).map((destination) => (
              <option key={destination.id} value={destination.id}>
                {destination.id}
              </option>
            ))}
          </select>
          <label for="dlq-reason">Reason</label>
          <select id="dlq-reason" value={draft.reason} onChange={(event) => setDraft({ ...draft, reason: event.currentTarget.value })}>
            <option value="">any</option>
            {DEAD_LETTER_REASONS.map((reason) => (
              <option key={reason} value={reason}>
                {reason}
              </option>
            ))}
          </select>
          <label for="dlq-since">Since</label>
          <input id="dlq-since" value={draft.since} placeholder="2h, 7d or an ISO time" size={16} onInput={(event) => setDraft({ ...draft, since: event.currentTarget.value })} />
          <button type="submit">Show</button>
        </form>
      </Section>
      <ReplayPanel filter={applied} destinationIds={(destinations.data?.destinations ?? []).map((d) => d.id)} onReplayed={() => setListCount((count) => count + 1)} />
      <Section
        title={`${list.data ? `${formatCount(list.data.matched)} matching, newest first` : 'Matching dead letters'}${page > 1 ? ` — page ${page}` : ''}`}
        actions={
          <>
            <button type="button" disabled={page === 1 || list.loading} onClick={() => setTrail(newerPage(trail))}>
              ← Newer
            </button>
            {/* Not while a page loads: the cursor shown would be the last page's, which would list it twice. */}
            <button type="button" disabled={!list.data?.next || list.loading} onClick={() => setTrail(olderPage(trail, list.data?.next ?? null))}>
              Older →
            </button>
          </>
        }
      >
        {list.error ? <ErrorNote error={list.error} context="Could not list dead letters" /> : null}
        {list.data ? (
          list.data.deadLetters.length === 0 ? (
            <Empty>No dead letters match. Deliveries that fail for good land here, and can be replayed once their destination is fixed.</Empty>
          ) : (
            <>
              {list.data.matched > list.data.deadLetters.length ? (
                <p class="muted">
                  Showing {list.data.deadLetters.length} of {formatCount(list.data.matched)}
                  {list.data.next ? '; Older → shows the next ones.' : '; the oldest are on this page.'}
                </p>
              ) : null}
              <DeadLetterTable letters={list.data.deadLetters} />
            </>
          )
        ) : list.error ? null : (
          <Loading what="dead letters" />
        )}
      </Section>
    </>
  );
}

function DeadLetterTable({ letters }: { letters: DeadLetter[] }) {
  return (
    <table class="grid dead-letters">
      <thead>
        <tr>
          <th>Dead at (UTC)</th>
          <th>Destination</th>
          <th>Message</th>
          <th>Type</th>
          <th>Reason</th>
          <th class="num">Status</th>
          <th class="num">Attempts</th>
          <th>Replayed</th>
          <th>Last error</th>
        </tr>
      </thead>
      <tbody>
        {letters.map((letter) => (
          <tr key={letter.id} data-dead-letter={letter.id} data-message-id={letter.messageId}>
            <td>{formatTime(letter.deadAt)}</td>
            <td>{letter.destinationId}</td>
            <td>
              <Link href={hrefs.message(letter.messageId)}>
                <code title={letter.messageId}>{shortId(letter.messageId)}</code>
              </Link>
            </td>
            <td>{letter.messageType}</td>
            <td>
              <Badge tone="bad">{letter.reason}</Badge>
            </td>
            <td class="num">{letter.status ?? NONE}</td>
            <td class="num">{letter.attempts}</td>
            <td>{letter.replayedAt ? formatTime(letter.replayedAt) : <span class="muted">no</span>}</td>
            <td class="wrap">{letter.error}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ReplayPanel({ filter, destinationIds, onReplayed }: { filter: DeadLetterFilter; destinationIds: string[]; onReplayed: () => void }) {
  const api = useApi();
  const [state, dispatch] = useReducer(replayStep, IDLE);
  const [destination, setDestination] = useState(filter.destination);
  const request = pendingRequest(state);

  useEffect(() => {
    if (!request) return;
    let current = true;
    api.replay(request).then(
      (result) => {
        if (!current) return;
        if (result.dryRun) dispatch({ type: 'previewed', preview: result });
        else {
          dispatch({ type: 'replayed', result });
          onReplayed();
        }
      },
      (error: unknown) => current && dispatch({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      current = false;
    };
    // One request per step of the state machine: `request` is a new object at each step.
  }, [request]);

  const check = (event: Event) => {
    event.preventDefault();
    if (!destination) return;
    dispatch({
      type: 'check',
      request: { destination, ...(filter.since ? { since: filter.since } : {}), ...(isReason(filter.reason) ? { reason: filter.reason } : {}) },
    });
  };
  const scope = [filter.reason ? `reason ${filter.reason}` : '', filter.since ? `since ${filter.since}` : ''].filter(Boolean).join(', ');

  return (
    <Section title="Replay">
      <form class="filters" onSubmit={check} aria-label="Replay dead letters">
        <label for="replay-destination">Destination</label>
        <select id="replay-destination" value={destination} onChange={(event) => setDestination(event.currentTarget.value)} disabled={state.step !== 'idle' && state.step !== 'done' && state.step !== 'failed'}>
          <option value="">choose…</option>
          {destinationIds.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
        <button type="submit" disabled={!destination || state.step === 'checking' || state.step === 'replaying' || state.step === 'confirm'}>
          {state.step === 'checking' ? 'Checking…' : 'Check what would be replayed'}
        </button>
        <span class="muted">
          {scope ? `Uses the filter above (${scope}). ` : ''}Each dead letter is replayed at most once, with a fresh retry window.
        </span>
      </form>
      {state.step === 'confirm' || state.step === 'replaying' ? (
        <div class="confirm" role="status">
          <p>{describeReplay(state.preview)}</p>
          {state.preview.replayed > 0 ? (
            <button type="button" class="primary" disabled={state.step === 'replaying'} onClick={() => dispatch({ type: 'confirm' })}>
              {state.step === 'replaying' ? 'Replaying…' : `Replay ${state.preview.replayed}`}
            </button>
          ) : null}{' '}
          <button type="button" disabled={state.step === 'replaying'} onClick={() => dispatch({ type: 'reset' })}>
            Cancel
          </button>
        </div>
      ) : null}
      {state.step === 'done' ? (
        <p class="state ok" role="status">
          {describeReplay(state.result)}
        </p>
      ) : null}
      {state.step === 'failed' ? <ErrorNote error={new Error(state.message)} context="Replay refused" /> : null}
    </Section>
  );
}
