/**
 * Where the admin API is and how to authenticate: flags first, then TRIBUTARY_URL and
 * TRIBUTARY_ADMIN_TOKEN (falling back to ADMIN_TOKEN, the variable the service reads).
 */
import { CliError, EXIT_FAILED } from './errors.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface CliSettings {
  url: string;
  token: string;
}

export interface GlobalOptions {
  url?: string;
  token?: string;
}

export function resolveSettings(options: GlobalOptions, env: Record<string, string | undefined>): CliSettings {
  const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const url = nonEmpty(options.url) ?? nonEmpty(env.TRIBUTARY_URL) ?? DEFAULT_URL;
  const token = nonEmpty(options.token) ?? nonEmpty(env.TRIBUTARY_ADMIN_TOKEN) ?? nonEmpty(env.ADMIN_TOKEN);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`"${url}" is not a URL; give the ingest service's base URL, e.g. ${DEFAULT_URL}`, EXIT_FAILED);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliError(`"${url}" must be an http or https URL`, EXIT_FAILED);
  if (!token) throw new CliError('no admin token: set TRIBUTARY_ADMIN_TOKEN (or ADMIN_TOKEN), or pass --token', EXIT_FAILED);
  return { url: url.replace(/\/+$/, ''), token };
}
