/**
 * The live tail ("Debugger"): asks `GET /messages?after=<cursor>` every second for what was
 * indexed since the last answer and puts it on top. Pausing stops the polling; resuming goes
 * on from the same cursor. A failed poll is shown and the next one tried a second later.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TailMessage } from '../api';
import { useApi } from '../api-context';
import { Empty, ErrorNote, Section, Time } from '../components';
import { formatTime, truncate, shortId } from '../format';
import { useNow, useResource } from '../hooks';
import { navigate } from '../navigation';
import { hrefs } from '../route';
import { mergeNewest, messageLabel, TAIL_MAX_ROWS, TAIL_POLL_MS, tailKey, whoOf } from '../tail';

export function LiveTail() {
  const api = useApi();
  const now = useNow();
  const [paused, setPaused] = useState(false);
  const [source, setSource] = useState('');
  const [rows, setRows] = useState<TailMessage[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const [polledAt, setPolledAt] = useState<number | null>(null);
  const cursor = useRef<string | undefined>(undefined);
  const sources = useResource(() => api.sources(), [api]);

  useEffect(() => {
    if (paused) return undefined;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const page = await api.tail({ after: cursor.current, source: source || undefined, limit: 100 });
        if (stopped) return;
        cursor.current = page.cursor;
        setRows((shown) => (page.messages.length > 0 ? mergeNewest(shown, page.messages) : shown));
        setError(null);
        setPolledAt(Date.now());
      } catch (thrown) {
        if (!stopped) setError(thrown instanceof Error ? thrown : new Error(String(thrown)));
      }
      if (!stopped) timer = setTimeout(() => void poll(), TAIL_POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [api, paused, source]);

  const changeSource = (value: string) => {
    // Another source's stream starts over: its cursor and rows are not this one's.
    cursor.current = undefined;
    setRows([]);
    setSource(value);
  };

  return (
    <Section
      title="Live tail"
      actions={
        <>
          <span class="muted" aria-live="polite">
            {paused ? 'paused' : polledAt ? `live · polled ${formatTime(new Date(polledAt).toISOString()).slice(11, 19)}` : 'connecting…'}
          </span>
          <label for="tail-source">Source</label>
          <select id="tail-source" value={source} onChange={(event) => changeSource(event.currentTarget.value)}>
            <option value="">all</option>
            {(sources.data?.sources ?? []).map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.id}
              </option>
            ))}
          </select>
          <button type="button" class={paused ? 'primary' : undefined} onClick={() => setPaused(!paused)} aria-pressed={paused}>
            {paused ? 'Resume' : 'Pause'}
          </button>
          <button type="button" onClick={() => setRows([])}>
            Clear
          </button>
        </>
      }
    >
      {error ? <ErrorNote error={error} context="The live tail did not answer (trying again every second)" /> : null}
      {rows.length === 0 ? (
        <Empty>{paused ? 'Paused.' : 'Waiting for messages… New messages appear here within a second or two of being indexed.'}</Empty>
      ) : (
        <table class="grid clickable tail">
          <thead>
            <tr>
              <th>Received</th>
              <th>Source</th>
              <th>Type</th>
              <th>Event / name</th>
              <th>User</th>
              <th>Message id</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((message) => (
              <tr key={tailKey(message)} data-message-id={message.messageId} onClick={() => navigate(hrefs.message(message.messageId))}>
                <td>
                  <Time iso={message.receivedAt} now={now} />
                </td>
                <td>{message.sourceId}</td>
                <td>{message.type}</td>
                <td>{truncate(messageLabel(message), 60)}</td>
                <td>{truncate(whoOf(message), 40)}</td>
                <td>
                  <code title={message.messageId}>{shortId(message.messageId)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rows.length === TAIL_MAX_ROWS ? <p class="muted">Showing the newest {TAIL_MAX_ROWS}; use the delivery log to search older ones.</p> : null}
    </Section>
  );
}
