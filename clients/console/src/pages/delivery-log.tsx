/**
 * The delivery log: a search over `GET /attempts` (newest first), its filters kept in the
 * page URL, paged by the API's cursor. A row opens the message view.
 */
import { useState } from 'preact/hooks';
import type { Attempt } from '../api';
import { useApi } from '../api-context';
import { Empty, ErrorNote, Loading, Section, StateBadge } from '../components';
import { attemptAnswer, formatDuration, formatTime, NONE, truncate, shortId } from '../format';
import { useResource } from '../hooks';
import {
  currentCursor,
  filterFromParams,
  filterProblems,
  filterToParams,
  filterToQuery,
  FIRST_PAGE,
  newerPage,
  olderPage,
  pageNumber,
  STATUS_CHOICES,
  type CursorTrail,
  type LogFilter,
} from '../log-query';
import { Link, navigate } from '../navigation';
import { hrefs, type Params } from '../route';

export function DeliveryLog({ params }: { params: Params }) {
  const api = useApi();
  // The app mounts this page afresh for each URL, so the form starts from the URL's filters.
  const applied = filterFromParams(params);
  const appliedKey = JSON.stringify(applied);
  const [draft, setDraft] = useState<LogFilter>(applied);
  const [trail, setTrail] = useState<CursorTrail>(FIRST_PAGE);
  const [problems, setProblems] = useState<string[]>(() => filterProblems(applied));
  const [searchCount, setSearchCount] = useState(0);
  // Fixed when a search is made, so its pages all look at the same range.
  const [pinnedUntil, setPinnedUntil] = useState(() => new Date().toISOString());
  const cursor = currentCursor(trail);
  const destinations = useResource(() => api.destinations(), [api]);
  const searchable = filterProblems(applied).length === 0;
  const page = useResource(() => api.attempts(filterToQuery(applied, cursor, pinnedUntil)), [api, appliedKey, cursor, searchCount, pinnedUntil], { enabled: searchable });

  const search = (event: Event) => {
    event.preventDefault();
    const found = filterProblems(draft);
    setProblems(found);
    if (found.length > 0) return;
    setTrail(FIRST_PAGE);
    setPinnedUntil(new Date().toISOString());
    // The same search again asks the API again: new attempts may have been indexed since.
    setSearchCount((count) => count + 1);
    navigate(hrefs.log(filterToParams(draft)));
  };
  const field = (name: keyof LogFilter) => ({
    id: `log-${name}`,
    value: draft[name],
    onInput: (event: Event) => setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value }),
  });

  return (
    <>
      <Section title="Delivery log">
        <form class="filters" onSubmit={search} aria-label="Search the delivery log">
          <label for="log-destination">Destination</label>
          <select {...field('destination')}>
            <option value="">any</option>
            {(destinations.data?.destinations ?? []).map((destination) => (
              <option key={destination.id} value={destination.id}>
                {destination.id}
              </option>
            ))}
            {draft.destination && !destinations.data?.destinations.some((d) => d.id === draft.destination) ? <option value={draft.destination}>{draft.destination}</option> : null}
          </select>
          <label for="log-status">Status</label>
          <input {...field('status')} list="log-status-choices" placeholder="any, or e.g. 503" size={16} />
          <datalist id="log-status-choices">
            {STATUS_CHOICES.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </datalist>
          <label for="log-userId">User id</label>
          <input {...field('userId')} size={14} />
          <label for="log-messageId">Message id</label>
          <input {...field('messageId')} size={24} />
          <label for="log-since">Since (UTC)</label>
          <input {...field('since')} type="datetime-local" step={1} />
          <label for="log-until">Until (UTC)</label>
          <input {...field('until')} type="datetime-local" step={1} />
          <button type="submit">Search</button>
        </form>
        {problems.length > 0 ? (
          <ul class="state error" role="alert">
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        ) : null}
        <p class="muted hint">Newest first. Without since/until the last hour is searched.</p>
      </Section>
      <Section
        title={`Attempts${pageNumber(trail) > 1 ? ` — page ${pageNumber(trail)}` : ''}`}
        actions={
          <>
            <button type="button" disabled={pageNumber(trail) === 1} onClick={() => setTrail(newerPage(trail))}>
              ← Newer
            </button>
            <button type="button" disabled={!page.data?.nextCursor} onClick={() => setTrail(olderPage(trail, page.data?.nextCursor ?? null))}>
              Older →
            </button>
          </>
        }
      >
        {page.error ? <ErrorNote error={page.error} context="The delivery log did not answer" /> : null}
        {page.data ? (
          page.data.attempts.length === 0 ? (
            <Empty>No attempts match this search.</Empty>
          ) : (
            <AttemptTable attempts={page.data.attempts} />
          )
        ) : page.error ? null : searchable ? (
          <Loading what="attempts" />
        ) : (
          <Empty>Correct the search above.</Empty>
        )}
      </Section>
    </>
  );
}

function AttemptTable({ attempts }: { attempts: Attempt[] }) {
  return (
    <table class="grid clickable attempts">
      <thead>
        <tr>
          <th>Started (UTC)</th>
          <th>Destination</th>
          <th>Message</th>
          <th>User</th>
          <th class="num">Attempt</th>
          <th>Outcome</th>
          <th>Status / error</th>
          <th class="num">Duration</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((attempt) => {
          const href = hrefs.message(attempt.messageId);
          return (
            <tr key={attempt.id} data-attempt-id={attempt.id} data-message-id={attempt.messageId} data-status={attempt.status ?? ''} onClick={() => navigate(href)}>
              <td>{formatTime(attempt.startedAt)}</td>
              <td>{attempt.destinationId}</td>
              <td>
                <Link href={href} onClick={(event) => event.stopPropagation()}>
                  <code title={attempt.messageId}>{shortId(attempt.messageId)}</code>
                </Link>
              </td>
              <td>{attempt.userId ?? (attempt.anonymousId ? <span class="muted">anon {truncate(attempt.anonymousId, 16)}</span> : NONE)}</td>
              <td class="num">{attempt.kind === 'attempt' ? attempt.attempt : <span class="muted">{attempt.kind}</span>}</td>
              <td>
                <StateBadge state={attempt.outcome} />
              </td>
              <td class="wrap">{attemptAnswer(attempt)}</td>
              <td class="num">{formatDuration(attempt.durationMs)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
