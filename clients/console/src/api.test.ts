import { describe, expect, it } from 'vitest';
import { AdminApi, ApiError, toQuery } from './api';

interface Call {
  url: string;
  init: RequestInit;
}

function fakeFetch(status: number, body: string, statusText = ''): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(input), init: init ?? {} });
    return new Response(body, { status, statusText, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fetchImpl, calls };
}

describe('toQuery', () => {
  it('encodes the values that are set and leaves out the rest', () => {
    expect(toQuery({})).toBe('');
    expect(toQuery({ a: undefined, b: '', c: null })).toBe('');
    expect(toQuery({ userId: 'u 1&x', limit: 50 })).toBe('?userId=u+1%26x&limit=50');
  });
});

describe('AdminApi', () => {
  it('sends the token in the Authorization header only, never in the URL', async () => {
    const { fetch, calls } = fakeFetch(200, '{"attempts":[],"nextCursor":null}');
    const api = new AdminApi({ token: 'tok-123', fetch });
    await api.attempts({ destination: 'crm', status: '5xx', cursor: 'abc' });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('/admin/v1/attempts?destination=crm&status=5xx&cursor=abc');
    expect(calls[0]!.url).not.toContain('tok-123');
    expect(calls[0]!.init.headers).toMatchObject({ authorization: 'Bearer tok-123' });
    expect(calls[0]!.init.credentials).toBe('same-origin');
  });

  it('escapes ids in paths', async () => {
    const { fetch, calls } = fakeFetch(200, '{}');
    const api = new AdminApi({ token: 't', fetch });
    await api.message('m/1?x');
    await api.timeline('a b', { since: '2026-11-25T09:00:00.000Z', bucket: '1m' });
    expect(calls.map((call) => call.url)).toEqual([
      '/admin/v1/messages/m%2F1%3Fx',
      '/admin/v1/destinations/a%20b/timeline?since=2026-11-25T09%3A00%3A00.000Z&bucket=1m',
    ]);
  });

  it('asks for the messages . and .. by query, since fetch resolves them as dot segments in a path', async () => {
    const { fetch, calls } = fakeFetch(200, '{}');
    const api = new AdminApi({ token: 't', fetch });
    for (const id of ['.', '..', '...']) await api.message(id);
    expect(calls.map((call) => call.url)).toEqual(['/admin/v1/messages/by-id?messageId=.', '/admin/v1/messages/by-id?messageId=..', '/admin/v1/messages/...']);
    // What the browser sends for each: the path survives URL parsing.
    expect(calls.map((call) => new URL(call.url, 'https://tributary.example').pathname)).toEqual(['/admin/v1/messages/by-id', '/admin/v1/messages/by-id', '/admin/v1/messages/...']);
  });

  it('posts JSON for a replay', async () => {
    const { fetch, calls } = fakeFetch(200, '{"destination":"crm","matched":1,"replayed":1,"skipped":0,"dryRun":true}');
    const result = await new AdminApi({ token: 't', fetch }).replay({ destination: 'crm', dryRun: true });
    expect(result.replayed).toBe(1);
    expect(calls[0]!.init.method).toBe('POST');
    expect(calls[0]!.init.body).toBe('{"destination":"crm","dryRun":true}');
    expect(calls[0]!.init.headers).toMatchObject({ 'content-type': 'application/json' });
  });

  it("throws the API's own error text, code and issues", async () => {
    const { fetch } = fakeFetch(400, '{"error":"invalid query: status: must be …","code":"validation_failed","issues":[{"path":"status","message":"must be …"}]}');
    const error = await new AdminApi({ token: 't', fetch }).attempts({ status: 'x' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: 'invalid query: status: must be …', status: 400, code: 'validation_failed', issues: [{ path: 'status', message: 'must be …' }] });
  });

  it('says what happened when the answer has no error text', async () => {
    const { fetch } = fakeFetch(502, '<html>bad gateway</html>', 'Bad Gateway');
    await expect(new AdminApi({ token: 't', fetch }).sources()).rejects.toMatchObject({ message: 'the admin API answered 502 Bad Gateway', code: 'http_error' });
  });

  it('reports a 401 so the app can ask for the token again', async () => {
    const { fetch } = fakeFetch(401, '{"error":"the admin token is not valid","code":"invalid_token","issues":[]}');
    const refused: ApiError[] = [];
    const api = new AdminApi({ token: 'wrong', fetch, onUnauthorized: (error) => refused.push(error) });
    await expect(api.destinations()).rejects.toMatchObject({ status: 401, code: 'invalid_token' });
    expect(refused.map((error) => error.message)).toEqual(['the admin token is not valid']);
  });

  it('names a network failure', async () => {
    const fetch = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof globalThis.fetch;
    await expect(new AdminApi({ token: 't', fetch }).sources()).rejects.toMatchObject({ message: 'cannot reach the ingest service: Failed to fetch', status: 0 });
  });
});
