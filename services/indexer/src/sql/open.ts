import type { SqlClient } from './client.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export interface DatabaseSettings {
  DELIVERY_LOG_DATABASE_URL?: string | undefined;
  DELIVERY_LOG_DATA_DIR: string;
}

/** PostgreSQL when a URL is set, else the embedded PGlite in the data directory. */
export async function openDatabase(settings: DatabaseSettings, onError?: (error: Error) => void): Promise<SqlClient> {
  if (settings.DELIVERY_LOG_DATABASE_URL !== undefined) return openPostgres({ url: settings.DELIVERY_LOG_DATABASE_URL, ...(onError ? { onError } : {}) });
  return openPglite(settings.DELIVERY_LOG_DATA_DIR);
}
