/**
 * What a group of admin routes is given. Each group (config, events, dead letters) is
 * one module exporting an `AdminRoutes`; the plugin mounts them all behind
 * the bearer check, with one error shape, under ADMIN_PREFIX.
 */
import type { HttpServer } from '@tributary/shared';
import type { ConfigStore } from './config-store.js';
import type { DestinationHealthTable } from './destination-health.js';
import type { AdminQuarantine } from './quarantine.js';
import type { AdminDeadLetters } from './dlq.js';
import type { AdminEvents } from './events.js';

export const ADMIN_PREFIX = '/admin/v1';

export interface AdminDeps {
  /** The bearer token (ADMIN_TOKEN). */
  token: string;
  config: ConfigStore;
  events: AdminEvents;
  deadLetters: AdminDeadLetters;
  /** Circuit state and backlog per destination, as the dispatchers publish them. */
  health: DestinationHealthTable;
  /** Records the services set aside, with their reasons. */
  quarantine: AdminQuarantine;
  /** False until the admin side has connected and caught up; requests get 503 meanwhile. */
  isReady(): boolean;
}

export type AdminRoutes = (scope: HttpServer, deps: AdminDeps) => void;
