/**
 * What an admin request does to the configuration, decided against the current state
 * without touching Kafka: the entity to store, the changes (for the response and the log)
 * and the records to write. Every write route and the declarative apply go through here,
 * so they share the rules of shared/config-model.
 */
import type { Destination, Source } from '@tributary/schemas';
import {
  checkDestination,
  checkSource,
  ConfigValidationError,
  destinationsUsing,
  diffConfig,
  parseConfigDocument,
  parseDestination,
  parseSource,
  type ApplyOptions,
  type ConfigChange,
  type ConfigState,
  type EntityKind,
  type ValidationIssue,
} from '@tributary/shared';
import { AdminError, invalid, notFound } from './errors.js';

/** A record for the config topic: the entity to store, or null for a tombstone. */
export interface ConfigWrite {
  kind: EntityKind;
  id: string;
  entity: Source | Destination | null;
}

export interface ConfigPlan<T> {
  result: T;
  changes: ConfigChange[];
  writes: ConfigWrite[];
}

export type PutMode = 'create' | 'replace';

const ROUTE: Record<EntityKind, string> = { source: 'sources', destination: 'destinations' };

const entitiesOf = (state: ConfigState, kind: EntityKind): ReadonlyArray<Source | Destination> => (kind === 'source' ? state.sources : state.destinations);

/** The body with the URL's id filled in; a different id in the body is refused. */
function withPathId(body: unknown, id: string | undefined): unknown {
  if (id === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const given = (body as { id?: unknown }).id;
  if (given === undefined) return { ...body, id };
  if (given !== id) throw invalid('request', [{ path: 'id', message: `must match the id in the URL ("${id}")` }]);
  return body;
}

/** Runs a parse from the config model, turning its validation error into a 400 about `what`. */
function validated<T>(what: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigValidationError) throw invalid(what, error.issues);
    throw error;
  }
}

function writesFor(changes: ConfigChange[], desired: ConfigState): ConfigWrite[] {
  return changes.map((change) => {
    if (change.action === 'delete') return { kind: change.kind, id: change.id, entity: null };
    const entity = entitiesOf(desired, change.kind).find((candidate) => candidate.id === change.id);
    if (!entity) throw new Error(`diff names ${change.kind} ${change.id}, which the desired state lacks`);
    return { kind: change.kind, id: change.id, entity };
  });
}

function replaceIn<T extends { id: string }>(list: readonly T[], entity: T): T[] {
  const index = list.findIndex((candidate) => candidate.id === entity.id);
  return index < 0 ? [...list, entity] : list.map((candidate, at) => (at === index ? entity : candidate));
}

/** The id a body names, if it names one as a string. */
function bodyId(body: unknown): string | undefined {
  const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** A POST of an existing id is a conflict, whatever else is wrong with the body. */
function refuseExisting(state: ConfigState, kind: EntityKind, body: unknown): void {
  const id = bodyId(body);
  if (id !== undefined && entitiesOf(state, kind).some((entity) => entity.id === id)) {
    throw new AdminError(409, 'already_exists', `${kind} "${id}" already exists; PUT /admin/v1/${ROUTE[kind]}/${id} replaces it`);
  }
}

function planPut<T extends Source | Destination>(state: ConfigState, kind: EntityKind, entity: T, issues: ValidationIssue[]): ConfigPlan<{ created: boolean; entity: T }> {
  if (issues.length > 0) throw invalid(kind, issues);
  const created = !entitiesOf(state, kind).some((candidate) => candidate.id === entity.id);
  const next: ConfigState =
    kind === 'source'
      ? { ...state, sources: replaceIn(state.sources, entity as Source) }
      : { ...state, destinations: replaceIn(state.destinations, entity as Destination) };
  const changes = diffConfig(state, next);
  return { result: { created, entity }, changes, writes: writesFor(changes, next) };
}

export function planSourcePut(state: ConfigState, body: unknown, mode: PutMode, pathId?: string): ConfigPlan<{ created: boolean; entity: Source }> {
  if (mode === 'create') refuseExisting(state, 'source', body);
  const source = validated('source', () => parseSource(withPathId(body, pathId)));
  return planPut(state, 'source', source, checkSource(source, state.sources));
}

export function planDestinationPut(state: ConfigState, body: unknown, mode: PutMode, pathId?: string): ConfigPlan<{ created: boolean; entity: Destination }> {
  if (mode === 'create') refuseExisting(state, 'destination', body);
  const input = withPathId(body, pathId);
  const id = bodyId(input);
  // Only a replace may keep a stored secret: a create has none to keep.
  const existing = mode === 'replace' ? state.destinations.find((destination) => destination.id === id) : undefined;
  const destination = validated('destination', () => parseDestination(input, '', existing));
  return planPut(state, 'destination', destination, checkDestination(destination, state.sources));
}

export function planDelete(state: ConfigState, kind: EntityKind, id: string): ConfigPlan<void> {
  if (!entitiesOf(state, kind).some((entity) => entity.id === id)) throw notFound(kind, id);
  if (kind === 'source') {
    const users = destinationsUsing(state, id);
    if (users.length > 0) {
      throw new AdminError(
        409,
        'source_in_use',
        `source "${id}" is used by destination${users.length > 1 ? 's' : ''} ${users.map((user) => `"${user}"`).join(', ')}; remove it from their sources first`,
        [],
        { destinations: users },
      );
    }
  }
  return { result: undefined, changes: [{ action: 'delete', kind, id }], writes: [{ kind, id, entity: null }] };
}

/** The declarative apply: the whole document validated, then diffed against the current state. */
export function planApply(state: ConfigState, document: unknown, options: ApplyOptions): ConfigPlan<void> {
  // Paths stay relative to the document: that is what the CLI and the start-up apply show against the file.
  const desired = validated('config document', () => parseConfigDocument(document, state, options));
  const changes = diffConfig(state, desired, options);
  return { result: undefined, changes, writes: writesFor(changes, desired) };
}
