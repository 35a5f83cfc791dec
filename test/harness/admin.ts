/**
 * A caller of a running ingest's admin API for tests that set config up through it: it
 * throws on any non-2xx answer, with the status and body, and returns the parsed JSON.
 */
export function adminClient(ingestUrl: () => string, token: string) {
  return async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${ingestUrl()}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
