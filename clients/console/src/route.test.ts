import { describe, expect, it } from 'vitest';
import { hrefs, parseRoute } from './route';

describe('parseRoute', () => {
  it('names each page by its path under /console/', () => {
    expect(parseRoute('/console/')).toEqual({ page: 'destinations', params: {} });
    expect(parseRoute('/console')).toEqual({ page: 'destinations', params: {} });
    expect(parseRoute('/console/log', '?destination=crm&status=5xx&userId=')).toEqual({ page: 'log', params: { destination: 'crm', status: '5xx' } });
    expect(parseRoute('/console/tail/')).toEqual({ page: 'tail', params: {} });
    expect(parseRoute('/console/dead-letters', '?reason=expired')).toEqual({ page: 'dead-letters', params: { reason: 'expired' } });
    expect(parseRoute('/console/charts', '?destination=a&range=6h')).toEqual({ page: 'charts', params: { destination: 'a', range: '6h' } });
  });

  it('decodes a message id, which may hold any character', () => {
    expect(parseRoute('/console/messages/m%2F1%20x')).toEqual({ page: 'message', messageId: 'm/1 x', params: {} });
    expect(parseRoute(hrefs.message('ajs-1?#%'))).toMatchObject({ page: 'message', messageId: 'ajs-1?#%' });
  });

  it('links the messages . and .. by query: in the path the browser resolves them as dot segments', () => {
    for (const id of ['.', '..', 'by-id', '...']) {
      const href = hrefs.message(id);
      // What the browser does to the link before the app sees it.
      const resolved = new URL(href, 'https://tributary.example');
      expect(parseRoute(resolved.pathname, resolved.search), id).toMatchObject({ page: 'message', messageId: id });
    }
    expect(hrefs.message('..')).toBe('/console/messages/by-id?messageId=..');
    expect(hrefs.message('m-1')).toBe('/console/messages/m-1');
  });

  it('calls anything else an unknown page', () => {
    expect(parseRoute('/console/nope')).toEqual({ page: 'not-found', path: '/console/nope', params: {} });
    expect(parseRoute('/console/messages/')).toMatchObject({ page: 'not-found' });
    expect(parseRoute('/console/messages/%E0%A4%A')).toMatchObject({ page: 'not-found' });
  });
});

describe('hrefs', () => {
  it('leave unset and empty filters out of the query string', () => {
    expect(hrefs.log({ destination: 'crm', status: '', userId: undefined })).toBe('/console/log?destination=crm');
    expect(hrefs.deadLetters()).toBe('/console/dead-letters');
    expect(hrefs.charts({ destination: 'a b', range: '1h' })).toBe('/console/charts?destination=a+b&range=1h');
    expect(hrefs.destinations()).toBe('/console/');
  });
});
