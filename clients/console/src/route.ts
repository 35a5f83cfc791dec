/**
 * The console's pages and their URLs under /console/ (history API, so a link can be shared and
 * reloaded: ingest answers every unknown path under /console/ with index.html). A page's
 * filters live in the query string; the admin token never does.
 */

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

export const hrefs = {
  destinations: () => BASE,
  log: (params?: Record<string, string | undefined>) => withQuery('log', params),
  message: (messageId: string) => `${BASE}messages/${encodeURIComponent(messageId)}`,
  tail: () => withQuery('tail'),
  deadLetters: (params?: Record<string, string | undefined>) => withQuery('dead-letters', params),
  charts: (params?: Record<string, string | undefined>) => withQuery('charts', params),
};
