/**
 * The admin API over HTTP, for command modules: every call sends the bearer token, and
 * every failure becomes a CliError with the right exit code — a 400 with its issues
 * (exit 1), anything else, including not reaching the server, exit 2.
 */
import { CliError, EXIT_FAILED, EXIT_INVALID } from './errors.js';
import type { CliSettings } from './settings.js';

interface ErrorBody {
  error?: unknown;
  code?: unknown;
  issues?: Array<{ path: string; message: string }>;
}

export class AdminClient {
  constructor(private readonly settings: CliSettings) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.send<T>(method, path, body === undefined ? undefined : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  /** Streams a body (a file of any size) instead of a JSON value. */
  async upload<T>(method: string, path: string, headers: Record<string, string>, body: AsyncIterable<Uint8Array>): Promise<T> {
    return this.send<T>(method, path, { headers, body });
  }

  private async send<T>(method: string, path: string, payload: { headers: Record<string, string>; body: string | AsyncIterable<Uint8Array> } | undefined): Promise<T> {
    const url = `${this.settings.url}/admin/v1${path}`;
    let response: Response;
    try {
      const init: RequestInit & { duplex?: 'half' } = {
        method,
        headers: { authorization: `Bearer ${this.settings.token}`, ...payload?.headers },
      };
      if (payload) {
        // A stream body needs duplex "half" in Node's fetch; the DOM types know no AsyncIterable body.
        init.body = payload.body as unknown as NonNullable<RequestInit['body']>;
        if (typeof payload.body !== 'string') init.duplex = 'half';
      }
      response = await fetch(url, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the ingest service at ${this.settings.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, EXIT_FAILED);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CliError(`${method} ${url} answered ${response.status} with a body that is not JSON`, EXIT_FAILED);
    }
    if (response.ok) return parsed as T;
    const { error, issues } = (parsed ?? {}) as ErrorBody;
    const message = typeof error === 'string' ? error : `${method} ${url} answered ${response.status}`;
    if (response.status === 400 && Array.isArray(issues) && issues.length > 0) throw new CliError(message, EXIT_INVALID, issues, response.status);
    if (response.status === 401) throw new CliError(`${message} (set TRIBUTARY_ADMIN_TOKEN or pass --token)`, EXIT_FAILED, [], response.status);
    throw new CliError(message, EXIT_FAILED, [], response.status);
  }
}
