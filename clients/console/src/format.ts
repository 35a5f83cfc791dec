/**
 * How the console writes times, durations, rates and states. Times are shown in UTC, like
 * the API and the services' logs, so what an operator reads here matches what they grep.
 */
import type { Attempt, AttemptOutcome, CircuitState, DeliveryState } from './api';

export const NONE = '—';

/** `2026-11-25 10:00:00.123` (UTC) from an ISO time; the dash for none. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return NONE;
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return iso;
  return time.toISOString().replace('T', ' ').replace('Z', '');
}

/** `12 ms`, `10.2 s`, `3 min 20 s`, `2 h 5 min`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return NONE;
  const abs = Math.abs(ms);
  const sign = ms < 0 ? '-' : '';
  if (abs < 1_000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${trimZero((abs / 1_000).toFixed(1))} s`;
  if (abs < 3_600_000) {
    const minutes = Math.floor(abs / 60_000);
    const seconds = Math.round((abs % 60_000) / 1_000);
    return `${sign}${minutes} min${seconds ? ` ${seconds} s` : ''}`;
  }
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.round((abs % 3_600_000) / 60_000);
  return `${sign}${hours} h${minutes ? ` ${minutes} min` : ''}`;
}

/** How long from `from` to `to` (ISO times), or the dash when either is missing. */
export function durationBetween(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return NONE;
  return formatDuration(new Date(to).getTime() - new Date(from).getTime());
}

/** `3 s ago`, `in 2 min`, `just now`. */
export function formatRelative(iso: string | null | undefined, now: number): string {
  if (!iso) return NONE;
  const delta = new Date(iso).getTime() - now;
  if (Number.isNaN(delta)) return iso;
  if (Math.abs(delta) < 1_000) return 'just now';
  const text = formatDuration(Math.abs(delta));
  return delta < 0 ? `${text} ago` : `in ${text}`;
}

function trimZero(text: string): string {
  return text.replace(/\.0$/, '');
}

/** 0.833 → `83.3%`, 1 → `100%`; the dash when no request was sent. */
export function formatPercent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return NONE;
  return `${trimZero((rate * 100).toFixed(1))}%`;
}

export function formatCount(count: number | null | undefined): string {
  if (count === null || count === undefined) return NONE;
  return count.toLocaleString('en-US');
}

export function circuitLabel(state: CircuitState | null | undefined): string {
  if (!state) return 'unknown';
  return state === 'half_open' ? 'half-open' : state;
}

export type Tone = 'good' | 'bad' | 'warn' | 'neutral';

/** The colour of a badge for a circuit state, a delivery state or an attempt outcome. */
export function toneOf(state: CircuitState | DeliveryState | AttemptOutcome | 'routed' | 'filtered' | string | null | undefined): Tone {
  switch (state) {
    case 'closed':
    case 'delivered':
    case 'routed':
      return 'good';
    case 'open':
    case 'dead':
      return 'bad';
    case 'half_open':
    case 'retry':
    case 'retrying':
    case 'deferred':
      return 'warn';
    default:
      return 'neutral';
  }
}

/** The tone of an HTTP status: 2xx good, 3xx/4xx/5xx bad, none neutral. */
export function statusTone(status: number | null | undefined): Tone {
  if (status === null || status === undefined) return 'neutral';
  return status >= 200 && status < 300 ? 'good' : 'bad';
}

const MASK = '•••';

/**
 * A webhook URL as the console shows it: scheme, host and the path's first segment stay
 * readable; credentials in the user-info part, every later path segment and query values are
 * masked. Chat hooks carry their token in the path (Slack's /services/T…/B…/<token>, Discord's
 * /api/webhooks/<id>/<token>), and a screenshot of this page must not deliver to them. When
 * anything is masked, a short hash of the whole URL follows, so two URLs on one host stay
 * apart: 24 bits, far too few to recover a token from, enough to tell a destination's few
 * URLs from one another.
 */
export function displayUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/[?#].*$/, '');
  }
  const auth = parsed.username || parsed.password ? `${MASK}@` : '';
  const [, first = '', ...rest] = parsed.pathname.split('/');
  // Empty segments (a trailing slash) are kept as they are: they hide nothing.
  const path = `/${[first, ...rest.map((segment) => (segment === '' ? '' : MASK))].join('/')}`;
  const query = [...parsed.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=${MASK}`).join('&');
  const masked = auth !== '' || rest.some((segment) => segment !== '') || query !== '' || parsed.hash !== '';
  return `${parsed.protocol}//${auth}${parsed.host}${path}${query ? `?${query}` : ''}${masked ? ` [${shortHash(url)}]` : ''}`;
}

/** FNV-1a (32 bits) of the text, as 6 hex digits: synchronous, unlike crypto.subtle, and only ever compared by eye. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0').slice(0, 6);
}

/** A write key shown by its ends only: enough to tell keys apart, not to use one from a screenshot. */
export function maskKey(key: string): string {
  if (key.length <= 8) return '•'.repeat(key.length);
  return `${key.slice(0, 4)}…${key.slice(-3)}`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * An id shortened in the middle: generated message ids share their start (`node-next-<time>-`)
 * and differ at the end, so both ends stay.
 */
export function shortId(id: string, max = 32): string {
  if (id.length <= max) return id;
  const tail = Math.floor((max - 1) / 2);
  return `${id.slice(0, max - 1 - tail)}…${id.slice(-tail)}`;
}

/** A message's JSON, indented, for a <pre>. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** What an attempt's answer was, in the fewest words: the status, else why there was none. */
export function attemptAnswer(attempt: Pick<Attempt, 'status' | 'error' | 'deferReason' | 'deadReason'>): string {
  if (attempt.status !== null) return attempt.error && attempt.error !== `HTTP ${attempt.status}` ? `${attempt.status} — ${attempt.error}` : String(attempt.status);
  return attempt.error ?? attempt.deferReason ?? attempt.deadReason ?? NONE;
}
