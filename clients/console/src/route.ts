/**
 * The console's pages and their URLs under /console/ (history API, so a link can be shared and
 * reloaded: ingest answers every unknown path under /console/ with index.html). A page's
 * filters live in the query string; the admin token never does.
 */
import { DOT_SEGMENT_IDS } from './api';

export const BASE = '/console/';

export type Params = Record<string, string>;

export type Route =
  | { page: 'destinations'; params: Params }
  | { page: 'log'; params: Params }
  | { page: 'message'; messageId: string; params: Params }
  | { page: 'tail'; params: Params }
  | { page: 'dead-letters'; params: Params }
  | { page: 'charts'; params: Params }
  | { page: 'not-found'; path: string; params: Params };

export type Page = Route['page'];

const SIMPLE_PAGES: Record<string, Exclude<Page, 'message' | 'not-found'>> = {
  '': 'destinations',
  log: 'log',
  tail: 'tail',
  'dead-letters': 'dead-letters',
  charts: 'charts',
};

function paramsOf(search: string): Params {
  const params: Params = {};
  for (const [name, value] of new URLSearchParams(search)) if (value !== '') params[name] = value;
  return params;
}

export function parseRoute(pathname: string, search = ''): Route {
  const params = paramsOf(search);
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname === BASE.slice(0, -1) ? '' : pathname;
  const trimmed = path.replace(/\/+$/, '');
  const simple = SIMPLE_PAGES[trimmed];
  if (simple) return { page: simple, params };
  // hrefs.message's form for the ids . and .. (see there); without the query, by-id is an id like any other.
  if (trimmed === `messages/${MESSAGE_BY_QUERY}` && params.messageId !== undefined) return { page: 'message', messageId: params.messageId, params };
  if (trimmed.startsWith('messages/') && trimmed.length > 'messages/'.length) {
    try {
      return { page: 'message', messageId: decodeURIComponent(trimmed.slice('messages/'.length)), params };
    } catch {
      // A malformed %-escape is no message id the console made: show it as an unknown page.
    }
  }
  return { page: 'not-found', path: pathname, params };
}

function withQuery(path: string, params: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return `${BASE}${path}${text ? `?${text}` : ''}`;
}

/** The path segment whose `?messageId=` names the message, as in the admin API (`/messages/by-id`). */
const MESSAGE_BY_QUERY = 'by-id';

/**
 * A message page's URL. The ids `.` and `..` ride in the query: in the path, history.pushState
 * and the browser's URL parser resolve them (and %2E) as dot segments, and the link opened the
 * destinations page instead.
 */
function messageHref(messageId: string): string {
  return DOT_SEGMENT_IDS.has(messageId) ? withQuery(`messages/${MESSAGE_BY_QUERY}`, { messageId }) : `${BASE}messages/${encodeURIComponent(messageId)}`;
}

export const hrefs = {
  destinations: () => BASE,
  log: (params?: Record<string, string | undefined>) => withQuery('log', params),
  message: messageHref,
  tail: () => withQuery('tail'),
  deadLetters: (params?: Record<string, string | undefined>) => withQuery('dead-letters', params),
  charts: (params?: Record<string, string | undefined>) => withQuery('charts', params),
};
