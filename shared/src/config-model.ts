/**
 * The configuration model — sources and Webhooks destinations — and every rule that
 * decides whether a piece of configuration is valid. The admin API, the declarative YAML
 * file and the CLI all validate through here, so they accept and refuse exactly the same
 * things with the same messages.
 */
import { z } from 'zod';
import type { Destination, Source, WebhookEntry } from '@tributary/schemas';

export const MAX_WEBHOOKS = 5;

/** Headers the dispatcher sets itself; a static header may not replace them. */
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'x-signature',
  'transfer-encoding',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

/** RFC 9110 token: the characters allowed in a header field name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const ID_MESSAGE = 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit';

export const REDACTED_SECRET = '[redacted]';

const id = z.string({ message: 'is required' }).regex(ID, ID_MESSAGE);

const webhookUrl = z.string({ message: 'is required' }).superRefine((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an absolute URL (include http:// or https://)` });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `"${text}" must use http or https, not ${url.protocol.replace(':', '')}` });
  } else if (!url.hostname) {
    ctx.addIssue({ code: 'custom', message: `"${text}" has no host` });
  }
});

const headers = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]), { message: 'must be an object of header names to values' })
  .superRefine((record, ctx) => {
    for (const [name, value] of Object.entries(record)) {
      if (!HEADER_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is not a valid HTTP header name` });
      } else if (RESERVED_HEADERS.includes(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is set by Tributary and cannot be a static header` });
      }
      if (/[\r\n\0]/.test(String(value))) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'header values may not contain CR, LF or NUL' });
      }
    }
  })
  .transform((record) => Object.fromEntries(Object.entries(record).map(([name, value]) => [name, String(value)])));

const webhookEntry = z
  .object({ url: webhookUrl, headers: headers.optional() }, { message: 'must be an object with a url' })
  .strict()
  .transform((entry): WebhookEntry => ({ url: entry.url, headers: entry.headers ?? {} }));

const secret = z.string().min(1, 'may not be empty').max(1024);

export const sourceInput = z
  .object({
    id,
    name: z.string().min(1).max(200).optional(),
    writeKey: z
      .string({ message: 'is required' })
      .min(8, 'must be at least 8 characters')
      .max(256)
      .regex(/^[\x21-\x39\x3b-\x7e]+$/, 'must be printable ASCII without spaces or ":" (it is sent as the HTTP basic user name)'),
    enabled: z.boolean().optional(),
  })
  .strict();

export const destinationInput = z
  .object({
    id,
    name: z.string().min(1).max(200).optional(),
    type: z.literal('webhooks', { message: 'must be "webhooks" (the only destination type)' }),
    sources: z.array(id).default([]),
    enabled: z.boolean().optional(),
    settings: z
      .object({
        sharedSecret: secret.nullable().optional(),
        standardWebhooksSecret: z
          .string()
          .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be a Standard Webhooks secret: whsec_ followed by base64')
          .nullable()
          .optional(),
        webhooks: z
          .array(webhookEntry)
          .min(1, 'needs at least one webhook URL')
          .max(MAX_WEBHOOKS, `at most ${MAX_WEBHOOKS} webhook URLs per destination`),
      }, { message: 'is required' })
      .strict(),
  })
  .strict();

export const configDocument = z
  .object({
    sources: z.array(z.unknown()).default([]),
    destinations: z.array(z.unknown()).default([]),
  })
  .strict();

export type SourceInput = z.input<typeof sourceInput>;
export type DestinationInput = z.input<typeof destinationInput>;

export interface ValidationIssue {
  path: string;
  message: string;
}

export class ConfigValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; '));
    this.name = 'ConfigValidationError';
  }
}

function formatPath(prefix: string, path: PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function issuesOf(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((issue) => {
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
    if (issue.code === 'invalid_type' && /received undefined/.test(message)) message = 'is required';
    return { path: formatPath(prefix, issue.path), message };
  });
}

export function parseSource(input: unknown, prefix = ''): Source {
  const result = sourceInput.safeParse(input);
  if (!result.success) throw new ConfigValidationError(issuesOf(result.error, prefix));
  const { id: sourceId, name, writeKey, enabled } = result.data;
  return { id: sourceId, name: name ?? sourceId, writeKey, enabled: enabled ?? true };
}

/**
 * `existing` lets an update keep a write-only secret: sending back the redacted marker
 * (what a read shows) leaves the stored secret unchanged.
 */
export function parseDestination(input: unknown, prefix = '', existing?: Destination): Destination {
  const result = destinationInput.safeParse(input);
  if (!result.success) throw new ConfigValidationError(issuesOf(result.error, prefix));
  const { id: destinationId, name, type, sources, enabled, settings } = result.data;
  const keep = (given: string | null | undefined, stored: string | null | undefined): string | null =>
    given === REDACTED_SECRET ? (stored ?? null) : (given ?? null);
  return {
    id: destinationId,
    name: name ?? destinationId,
    type,
    sources: [...new Set(sources)],
    enabled: enabled ?? true,
    settings: {
      sharedSecret: keep(settings.sharedSecret, existing?.settings.sharedSecret),
      standardWebhooksSecret: keep(settings.standardWebhooksSecret, existing?.settings.standardWebhooksSecret),
      webhooks: settings.webhooks,
    },
  };
}

export interface ConfigState {
  sources: Source[];
  destinations: Destination[];
}

/**
 * Validates a whole declarative document: each entity, unique ids and write keys, and
 * that every destination names sources that exist in the document or in `existing`.
 */
export function parseConfigDocument(document: unknown, existing: ConfigState = { sources: [], destinations: [] }): ConfigState {
  const shape = configDocument.safeParse(document ?? {});
  if (!shape.success) throw new ConfigValidationError(issuesOf(shape.error, ''));
  const issues: ValidationIssue[] = [];
  const sources: Source[] = [];
  const destinations: Destination[] = [];
  shape.data.sources.forEach((input, index) => {
    try {
      sources.push(parseSource(input, `sources[${index}]`));
    } catch (error) {
      if (!(error instanceof ConfigValidationError)) throw error;
      issues.push(...error.issues);
    }
  });
  const existingDestinations = new Map(existing.destinations.map((destination) => [destination.id, destination]));
  shape.data.destinations.forEach((input, index) => {
    try {
      const candidateId = (input as { id?: unknown } | null)?.id;
      destinations.push(parseDestination(input, `destinations[${index}]`, typeof candidateId === 'string' ? existingDestinations.get(candidateId) : undefined));
    } catch (error) {
      if (!(error instanceof ConfigValidationError)) throw error;
      issues.push(...error.issues);
    }
  });
  issues.push(...crossCheck({ sources, destinations }, existing));
  if (issues.length > 0) throw new ConfigValidationError(issues);
  return { sources, destinations };
}

function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const value of values) (seen.has(value) ? repeated : seen).add(value);
  return [...repeated];
}

/** Rules across entities: unique ids and write keys, destinations naming known sources. */
export function crossCheck(desired: ConfigState, existing: ConfigState): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const duplicate of duplicates(desired.sources.map((source) => source.id))) {
    issues.push({ path: 'sources', message: `source id "${duplicate}" appears more than once` });
  }
  for (const duplicate of duplicates(desired.destinations.map((destination) => destination.id))) {
    issues.push({ path: 'destinations', message: `destination id "${duplicate}" appears more than once` });
  }
  const byId = new Map(existing.sources.map((source) => [source.id, source]));
  for (const source of desired.sources) byId.set(source.id, source);
  const owners = new Map<string, string>();
  for (const source of byId.values()) {
    const owner = owners.get(source.writeKey);
    if (owner !== undefined && owner !== source.id) {
      issues.push({ path: 'sources', message: `sources "${owner}" and "${source.id}" share a write key; write keys must be unique` });
    }
    owners.set(source.writeKey, source.id);
  }
  desired.destinations.forEach((destination, index) => {
    for (const sourceId of destination.sources) {
      if (!byId.has(sourceId)) {
        issues.push({ path: `destinations[${index}].sources`, message: `unknown source "${sourceId}"` });
      }
    }
  });
  return issues;
}

/** What a read returns: secrets replaced by a marker that says whether one is set. */
export function redactDestination(destination: Destination): Destination {
  const { sharedSecret, standardWebhooksSecret } = destination.settings;
  return {
    ...destination,
    settings: {
      ...destination.settings,
      sharedSecret: sharedSecret ? REDACTED_SECRET : null,
      standardWebhooksSecret: standardWebhooksSecret ? REDACTED_SECRET : null,
    },
  };
}

export function redactSource(source: Source): Source {
  return { ...source, writeKey: `${source.writeKey.slice(0, 4)}…` };
}

export type EntityKind = 'source' | 'destination';

export function configKey(kind: EntityKind, entityId: string): string {
  return `${kind}/${entityId}`;
}

export function parseConfigKey(key: string): { kind: EntityKind; id: string } | undefined {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  if (slash < 0 || (kind !== 'source' && kind !== 'destination')) return undefined;
  return { kind, id: key.slice(slash + 1) };
}

export function isDestination(entity: Source | Destination): entity is Destination {
  return 'settings' in entity;
}

export interface ConfigChange {
  action: 'create' | 'update' | 'delete';
  kind: EntityKind;
  id: string;
  /** For updates: the top-level fields (or settings.*) that differ; secrets named, never shown. */
  fields?: string[];
}

function changedFields(before: object, after: object, prefix = ''): string[] {
  const fields: string[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const a = (before as Record<string, unknown>)[key];
    const b = (after as Record<string, unknown>)[key];
    if (key === 'settings' && a && b && typeof a === 'object' && typeof b === 'object') {
      fields.push(...changedFields(a, b, 'settings.'));
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      fields.push(`${prefix}${key}`);
    }
  }
  return fields;
}

/**
 * The changes that turn `current` into `desired`. Entities absent from `desired` are
 * deleted only with `prune`, so a start-up apply never removes what the admin API added.
 * Creates and updates of sources come before destinations, deletions of destinations
 * before sources, so no reader ever sees a destination naming a missing source.
 */
export function diffConfig(current: ConfigState, desired: ConfigState, options: { prune?: boolean } = {}): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const diffKind = <T extends Source | Destination>(kind: EntityKind, now: T[], wanted: T[]): { upserts: ConfigChange[]; deletes: ConfigChange[] } => {
    const existing = new Map(now.map((entity) => [entity.id, entity]));
    const upserts: ConfigChange[] = [];
    for (const entity of wanted) {
      const before = existing.get(entity.id);
      if (!before) upserts.push({ action: 'create', kind, id: entity.id });
      else {
        const fields = changedFields(before, entity);
        if (fields.length > 0) upserts.push({ action: 'update', kind, id: entity.id, fields });
      }
    }
    const wantedIds = new Set(wanted.map((entity) => entity.id));
    const deletes = options.prune
      ? now.filter((entity) => !wantedIds.has(entity.id)).map((entity): ConfigChange => ({ action: 'delete', kind, id: entity.id }))
      : [];
    return { upserts, deletes };
  };
  const sources = diffKind('source', current.sources, desired.sources);
  const destinations = diffKind('destination', current.destinations, desired.destinations);
  changes.push(...sources.upserts, ...destinations.upserts, ...destinations.deletes, ...sources.deletes);
  return changes;
}
