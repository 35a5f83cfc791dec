/**
 * The configuration model — sources and Webhooks destinations — and every rule that
 * decides whether a piece of configuration is valid. The admin API, the declarative YAML
 * file and the CLI all validate through here, so they accept and refuse exactly the same
 * things with the same messages and paths (`settings.webhooks[0].headers.Host`).
 */
import { z } from 'zod';
import type { Destination, Source, WebhookEntry } from '@tributary/schemas';

export const MAX_WEBHOOKS = 5;
export const MAX_HEADERS_PER_WEBHOOK = 20;
export const MAX_HEADER_VALUE_LENGTH = 4096;
/**
 * Longest static header name, and most characters of names and values together per webhook
 * URL: servers commonly refuse a request whose header section passes 8 KiB (Apache's
 * LimitRequestFieldSize, nginx's header buffers), so a larger set would fail every delivery.
 */
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_CHARACTERS = 8192;
export const MAX_URL_LENGTH = 2048;
export const MAX_SECRET_LENGTH = 1024;

/**
 * Headers the dispatcher sets itself, lower-cased; a static header may not replace them.
 * The spec names the first five; the others are framing headers, the Standard Webhooks
 * signature headers, which a static value would corrupt just the same, and Content-Encoding:
 * the body is sent unencoded, so a static value would make the receiver misread it.
 */
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'x-signature',
  'transfer-encoding',
  'connection',
  'content-encoding',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

/**
 * Hop-by-hop headers, lower-cased, that the connection manages and the dispatcher's HTTP client
 * (undici) refuses or misreads as a static header: undici refuses `Expect`, `Keep-Alive` and
 * `Upgrade` outright, so every request of such a destination failed before anything was sent;
 * `TE` and `Proxy-Connection` mean nothing end to end, and `Trailer` announces trailer fields
 * a request from the dispatcher never has. (`Connection` and `Transfer-Encoding` are in
 * RESERVED_HEADERS.) A static header may not set them.
 */
export const HOP_BY_HOP_HEADERS = ['expect', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'];

/** What a read shows instead of a stored secret; sending it back keeps the stored one. */
export const REDACTED_SECRET = '[redacted]';

/** RFC 9110 token: the characters allowed in a header field name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * What a header value may hold: tabs and printable ASCII. undici refuses control characters
 * and anything past U+00FF; a value it refuses made every delivery to that URL undeliverable.
 */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
/**
 * ASCII whitespace and control characters. WHATWG URL parsing (undici's) deletes tabs and line
 * breaks anywhere and spaces and controls at either end without a word, so a stored URL holding
 * one is sent somewhere other than what reads show: "https://ev\nil.com" goes to evil.com.
 */
const URL_INVISIBLE = /[\x00-\x20\x7f]/;
/**
 * How a stored URL must begin: the scheme, "//" and then the host. The parser also takes
 * "https:host", "https:///host" and "https:\\host" and finds a host in them that the text does
 * not plainly show.
 */
const SCHEME_AND_HOST = /^https?:\/\/[^/\\]/i;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const WRITE_KEY = /^[\x21-\x39\x3b-\x7e]+$/;
const STANDARD_WEBHOOKS_SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** Messages for a value that is missing or of the wrong JSON type. */
const expected = (what: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`);

const id = z
  .string({ error: expected('a string') })
  .regex(ID, 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit');

const displayName = z
  .string({ error: expected('a string') })
  .min(1, 'may not be empty')
  .max(200, 'must be at most 200 characters');

const enabled = z.boolean({ error: expected('true or false') });

const webhookUrl = z.string({ error: expected('a string') }).superRefine((text, ctx) => {
  if (text.length > MAX_URL_LENGTH) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_URL_LENGTH} characters` });
    return;
  }
  // The URL itself is never quoted in these messages: it may carry credentials, and the
  // messages reach the admin API's answers and, for a config file, the start-up log.
  if (URL_INVISIBLE.test(text)) {
    ctx.addIssue({
      code: 'custom',
      message: 'may not contain spaces, tabs, line breaks or other control characters: URL parsing drops some of them silently, so requests would go elsewhere than the URL shown (percent-encode them, e.g. %20)',
    });
    return;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not an absolute URL (include http:// or https://)' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `must use http or https, not ${url.protocol.replace(':', '')}` });
  } else if (!SCHEME_AND_HOST.test(text)) {
    ctx.addIssue({ code: 'custom', message: 'must start with "http://" or "https://" followed by the host' });
  }
  // Credentials in a URL would be shown by every read of the config; as a static header
  // they are write-only like the shared secret.
  if (url.username !== '' || url.password !== '') {
    ctx.addIssue({
      code: 'custom',
      message:
        'must not carry credentials (user:password@host): send them as a static header instead, e.g. ' +
        '"Authorization": "Basic <base64 of user:password>", whose value the admin API never shows',
    });
  }
});

const headerValue = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string' });

/**
 * A header map without a prototype: a name such as `__proto__` is then an ordinary key, never
 * the object's prototype, wherever the map is written.
 */
function headerMap(): Record<string, string> {
  return Object.create(null) as Record<string, string>;
}

/**
 * Static headers, read from the input's own entries rather than through `z.record`, which
 * builds its result by assignment and so dropped a `__proto__` name without a word (a YAML
 * file can hold one). That name is refused: Avro decoding and plain objects in every service
 * that reads the config would lose it just the same.
 */
const headers = z
  .unknown()
  // Checked in a refinement, not in the transform: issues raised in a transform abort the
  // parse of everything around it, so the list's own checks (at most five URLs, each once)
  // would go unreported beside a header's.
  .superRefine((input, ctx) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      ctx.addIssue({ code: 'custom', message: 'must be an object of header names to values' });
      return;
    }
    const entries = Object.entries(input);
    if (entries.length > MAX_HEADERS_PER_WEBHOOK) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS_PER_WEBHOOK} static headers per webhook URL` });
    }
    const seen = new Map<string, string>();
    let characters = 0;
    for (const [name, value] of entries) {
      const lower = name.toLowerCase();
      // A long name is reported on the map, not at a path made of the name itself.
      if (name.length > MAX_HEADER_NAME_LENGTH) {
        ctx.addIssue({
          code: 'custom',
          message: `header names must be at most ${MAX_HEADER_NAME_LENGTH} characters; ${JSON.stringify(name.slice(0, 32))}… has ${name.length}`,
        });
      } else if (!HEADER_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is not a valid HTTP header name` });
      } else if (lower === '__proto__') {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" cannot be a static header name` });
      } else if (RESERVED_HEADERS.includes(lower)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is set by Tributary and cannot be a static header` });
      } else if (HOP_BY_HOP_HEADERS.includes(lower)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is a hop-by-hop header, managed by the HTTP connection, and cannot be a static header` });
      } else if (seen.has(lower)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `repeats header "${seen.get(lower)}" (header names are case-insensitive)` });
      }
      if (!seen.has(lower)) seen.set(lower, name);
      if (!headerValue.safeParse(value).success) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be a string' });
        continue;
      }
      const text = String(value);
      // An over-long name is refused already; counted too, it would be reported twice.
      characters += (name.length > MAX_HEADER_NAME_LENGTH ? 0 : name.length) + text.length;
      if (/[\r\n\0]/.test(text)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'header values may not contain CR, LF or NUL' });
      } else if (!HEADER_VALUE.test(text)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'header values may hold only tabs and printable ASCII (other characters cannot be sent in an HTTP header)' });
      } else if (text.length > MAX_HEADER_VALUE_LENGTH) {
        ctx.addIssue({ code: 'custom', path: [name], message: `header values must be at most ${MAX_HEADER_VALUE_LENGTH} characters` });
      }
    }
    if (characters > MAX_HEADER_CHARACTERS) {
      ctx.addIssue({
        code: 'custom',
        message: `the static headers of one webhook URL may hold at most ${MAX_HEADER_CHARACTERS} characters of names and values together; these hold ${characters}`,
      });
    }
  })
  .transform((input): Record<string, string> => {
    const result = headerMap();
    if (typeof input !== 'object' || input === null) return result;
    // YAML reads `X-Retries: 3` as a number; such scalars are sent as their text.
    for (const [name, value] of Object.entries(input)) result[name] = String(value);
    return result;
  });

const webhookEntry = z
  .object({ url: webhookUrl, headers: headers.optional() }, { error: 'must be an object with a url' })
  .strict()
  .transform((entry): WebhookEntry => ({ url: entry.url, headers: entry.headers ?? headerMap() }));

const webhooks = z
  .array(webhookEntry, { error: expected('a list of webhook entries') })
  .superRefine((entries, ctx) => {
    if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'needs at least one webhook URL' });
    if (entries.length > MAX_WEBHOOKS) {
      // Named at the first entry over the limit, so the message points at what to remove.
      ctx.addIssue({ code: 'custom', path: [MAX_WEBHOOKS], message: `at most ${MAX_WEBHOOKS} webhook URLs per destination` });
    }
    // A URL twice would receive every delivery twice, and a redacted header value sent back
    // could not say which entry's stored value it keeps. Compared as parsed, so the same URL
    // written another way ("HTTPS://Host" for "https://host/") counts too.
    const first = new Map<string, number>();
    entries.forEach((entry, index) => {
      // Every URL here parsed (the array is checked only once its entries are valid).
      const href = URL.canParse(entry.url) ? new URL(entry.url).href : entry.url;
      const earlier = first.get(href);
      if (earlier === undefined) first.set(href, index);
      else ctx.addIssue({ code: 'custom', path: [index, 'url'], message: `is the same URL as webhooks[${earlier}]; each URL may appear once per destination` });
    });
  });

const sharedSecret = z
  .string({ error: expected('a string (quote it in YAML)') })
  .min(1, 'may not be empty')
  .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`);

const standardWebhooksSecret = z
  .string({ error: expected('a string') })
  .refine((text) => text === REDACTED_SECRET || STANDARD_WEBHOOKS_SECRET.test(text), 'must be a Standard Webhooks secret: whsec_ followed by base64');

export const sourceInput = z
  .object(
    {
      id,
      name: displayName.optional(),
      writeKey: z
        .string({ error: expected('a string') })
        .min(8, 'must be at least 8 characters')
        .max(256, 'must be at most 256 characters')
        .regex(WRITE_KEY, 'must be printable ASCII without spaces or ":" (it is sent as the HTTP basic user name)'),
      enabled: enabled.optional(),
    },
    { error: 'must be an object' },
  )
  .strict();

export const destinationInput = z
  .object(
    {
      id,
      name: displayName.optional(),
      type: z.literal('webhooks', { error: (issue) => (issue.input === undefined ? 'is required' : 'must be "webhooks" (the only destination type)') }),
      // Required, so a PUT that leaves it out cannot disconnect the destination from every
      // source by accident; [] says so on purpose.
      sources: z.array(id, {
        error: (issue) => (issue.input === undefined ? 'is required: the ids of the sources this destination receives from ([] for none)' : 'must be a list of source ids'),
      }),
      enabled: enabled.optional(),
      settings: z
        .object(
          {
            sharedSecret: sharedSecret.nullable().optional(),
            standardWebhooksSecret: standardWebhooksSecret.nullable().optional(),
            webhooks,
          },
          { error: expected('an object') },
        )
        .strict(),
    },
    { error: 'must be an object' },
  )
  .strict();

const configDocument = z
  .object(
    {
      sources: z.array(z.unknown(), { error: 'must be a list' }).optional(),
      destinations: z.array(z.unknown(), { error: 'must be a list' }).optional(),
    },
    { error: 'must be an object with "sources" and "destinations" lists' },
  )
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

const PLAIN_SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `['settings', 'webhooks', 0, 'headers', 'Host']` → `settings.webhooks[0].headers.Host`. */
export function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (PLAIN_SEGMENT.test(String(part))) out += out ? `.${String(part)}` : String(part);
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

function issuesOf(error: z.ZodError, prefix: string): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: formatPath(prefix, issue.path),
    message: issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}` : issue.message,
  }));
}

export function parseSource(input: unknown, prefix = ''): Source {
  const result = sourceInput.safeParse(input);
  if (!result.success) throw new ConfigValidationError(issuesOf(result.error, prefix));
  const { id: sourceId, name, writeKey, enabled: isEnabled } = result.data;
  return { id: sourceId, name: name ?? sourceId, writeKey, enabled: isEnabled ?? true };
}

/**
 * `existing` lets an update keep a write-only secret: sending back the redacted marker
 * (what a read shows) leaves the stored secret unchanged. The marker with nothing stored
 * is an error rather than "no secret", so a redacted export applied to an empty cluster
 * cannot silently turn signing off.
 */
export function parseDestination(input: unknown, prefix = '', existing?: Destination): Destination {
  const result = destinationInput.safeParse(input);
  if (!result.success) throw new ConfigValidationError(issuesOf(result.error, prefix));
  const { id: destinationId, name, type, sources, enabled: isEnabled, settings } = result.data;
  const issues: ValidationIssue[] = [];
  const keep = (field: 'sharedSecret' | 'standardWebhooksSecret'): string | null => {
    const given = settings[field];
    if (given !== REDACTED_SECRET) return given ?? null;
    const stored = existing?.settings[field];
    if (!stored) {
      issues.push({
        path: formatPath(prefix, ['settings', field]),
        message: `is "${REDACTED_SECRET}" (what reads show) but no secret is stored for destination "${destinationId}"; give the secret itself`,
      });
    }
    return stored ?? null;
  };
  // Static header values are write-only too: the marker keeps the value stored for the same
  // header of the entry with exactly the same URL, and nothing else. Matching by position
  // once moved an entry's Authorization to whatever URL took that entry's place.
  const storedHeaders = (url: string): Record<string, string> | undefined => {
    const matches = existing?.settings.webhooks.filter((entry) => entry.url === url) ?? [];
    // Two stored entries with one URL (written before such were refused): neither is the one meant.
    return matches.length === 1 ? matches[0]!.headers : undefined;
  };
  const webhooks = settings.webhooks.map((entry, index) => {
    const headers = headerMap();
    const stored = storedHeaders(entry.url);
    for (const [header, value] of Object.entries(entry.headers)) {
      if (value !== REDACTED_SECRET) {
        headers[header] = value;
        continue;
      }
      const path = formatPath(prefix, ['settings', 'webhooks', index, 'headers', header]);
      if (stored === undefined) {
        issues.push({
          path,
          message: `is "${REDACTED_SECRET}" (what reads show), but this destination has no stored webhook with exactly this URL, so there is no value to keep: send the value again`,
        });
        continue;
      }
      const kept = Object.entries(stored).find(([name]) => name.toLowerCase() === header.toLowerCase())?.[1];
      if (kept === undefined) {
        issues.push({ path, message: `is "${REDACTED_SECRET}" (what reads show) but no value is stored for this header of this URL; send the value again` });
      } else headers[header] = kept;
    }
    return { url: entry.url, headers };
  });
  const destination: Destination = {
    id: destinationId,
    name: name ?? destinationId,
    type,
    sources: [...new Set(sources)],
    enabled: isEnabled ?? true,
    settings: {
      sharedSecret: keep('sharedSecret'),
      standardWebhooksSecret: keep('standardWebhooksSecret'),
      webhooks,
    },
  };
  if (issues.length > 0) throw new ConfigValidationError(issues);
  return destination;
}

export interface ConfigState {
  sources: Source[];
  destinations: Destination[];
}

export const EMPTY_CONFIG: ConfigState = { sources: [], destinations: [] };

/** A source's write key must not be another source's: the key alone picks the source. */
export function checkSource(source: Source, others: readonly Source[], prefix = ''): ValidationIssue[] {
  const owner = others.find((other) => other.id !== source.id && other.writeKey === source.writeKey);
  return owner ? [{ path: formatPath(prefix, ['writeKey']), message: `is already the write key of source "${owner.id}"; write keys must be unique` }] : [];
}

/** Every source a destination names must exist. */
export function checkDestination(destination: Destination, sources: readonly Source[], prefix = ''): ValidationIssue[] {
  const known = new Set(sources.map((source) => source.id));
  const issues: ValidationIssue[] = [];
  destination.sources.forEach((sourceId, index) => {
    if (!known.has(sourceId)) issues.push({ path: formatPath(prefix, ['sources', index]), message: `unknown source "${sourceId}"` });
  });
  return issues;
}

export interface ApplyOptions {
  /** Delete what exists but is absent from the document. */
  prune?: boolean;
}

/**
 * The sources that exist once a document is applied: with `prune` only the document's,
 * otherwise the document's plus the existing ones it does not mention.
 */
function resultingSources(desired: ConfigState, existing: ConfigState, options: ApplyOptions): Source[] {
  if (options.prune) return desired.sources;
  const byId = new Map(existing.sources.map((source) => [source.id, source]));
  for (const source of desired.sources) byId.set(source.id, source);
  return [...byId.values()];
}

/**
 * Rules across entities for a whole document: ids appear once, write keys are unique and
 * every destination names sources that will exist once the document is applied.
 */
export function crossCheck(desired: ConfigState, existing: ConfigState, options: ApplyOptions = {}): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const repeated = <T extends { id: string }>(list: string, entities: readonly T[]) => {
    const first = new Map<string, number>();
    entities.forEach((entity, index) => {
      const earlier = first.get(entity.id);
      if (earlier === undefined) first.set(entity.id, index);
      else issues.push({ path: `${list}[${index}].id`, message: `"${entity.id}" is already the id of ${list}[${earlier}]` });
    });
  };
  repeated('sources', desired.sources);
  repeated('destinations', desired.destinations);
  const sources = resultingSources(desired, existing, options);
  const desiredIds = new Set(desired.sources.map((source) => source.id));
  const kept = sources.filter((source) => !desiredIds.has(source.id));
  // Each clash is reported once, at the later of the two sources.
  desired.sources.forEach((source, index) => issues.push(...checkSource(source, [...kept, ...desired.sources.slice(0, index)], `sources[${index}]`)));
  desired.destinations.forEach((destination, index) => issues.push(...checkDestination(destination, sources, `destinations[${index}]`)));
  return issues;
}

/**
 * Validates a whole declarative document: each entity, then the rules across entities
 * against what `existing` holds (a redacted secret keeps the existing destination's).
 */
export function parseConfigDocument(document: unknown, existing: ConfigState = EMPTY_CONFIG, options: ApplyOptions = {}): ConfigState {
  // No default for a missing document: applied with prune, "nothing" would delete everything.
  const shape = configDocument.safeParse(document);
  if (!shape.success) throw new ConfigValidationError(issuesOf(shape.error, ''));
  const issues: ValidationIssue[] = [];
  const collect = <T>(parse: () => T, into: T[]) => {
    try {
      into.push(parse());
    } catch (error) {
      if (!(error instanceof ConfigValidationError)) throw error;
      issues.push(...error.issues);
    }
  };
  const sources: Source[] = [];
  const destinations: Destination[] = [];
  (shape.data.sources ?? []).forEach((input, index) => collect(() => parseSource(input, `sources[${index}]`), sources));
  const stored = new Map(existing.destinations.map((destination) => [destination.id, destination]));
  (shape.data.destinations ?? []).forEach((input, index) => {
    const candidateId = typeof input === 'object' && input !== null ? (input as { id?: unknown }).id : undefined;
    collect(() => parseDestination(input, `destinations[${index}]`, typeof candidateId === 'string' ? stored.get(candidateId) : undefined), destinations);
  });
  // Cross-entity rules only make sense once every entity parsed.
  if (issues.length === 0) issues.push(...crossCheck({ sources, destinations }, existing, options));
  if (issues.length > 0) throw new ConfigValidationError(issues);
  return { sources, destinations };
}

/** Ids of the destinations that name a source; a source they still name cannot be deleted. */
export function destinationsUsing(state: ConfigState, sourceId: string): string[] {
  return state.destinations.filter((destination) => destination.sources.includes(sourceId)).map((destination) => destination.id).sort();
}

/**
 * What a read returns: secrets and static header values (often credentials: API keys,
 * `Authorization`) replaced by a marker that says one is set. Header names stay visible.
 */
export function redactDestination(destination: Destination): Destination {
  const { sharedSecret, standardWebhooksSecret, webhooks } = destination.settings;
  return {
    ...destination,
    settings: {
      ...destination.settings,
      sharedSecret: sharedSecret ? REDACTED_SECRET : null,
      standardWebhooksSecret: standardWebhooksSecret ? REDACTED_SECRET : null,
      webhooks: webhooks.map((entry) => ({ url: entry.url, headers: Object.fromEntries(Object.keys(entry.headers).map((name) => [name, REDACTED_SECRET])) })),
    },
  };
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
  /** For updates: the fields (settings.* one level down) that differ; secrets are named, never shown. */
  fields?: string[];
}

/** JSON with object keys sorted, so header order and source order do not count as changes. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (Array.isArray(inner) || inner === null || typeof inner !== 'object') return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

function changedFields(before: Source | Destination, after: Source | Destination): string[] {
  const fields: string[] = [];
  const compare = (a: object, b: object, prefix: string) => {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const x = (a as Record<string, unknown>)[key];
      const y = (b as Record<string, unknown>)[key];
      if (key === 'settings' && x && y && typeof x === 'object' && typeof y === 'object') compare(x, y, 'settings.');
      else if (key === 'sources' && Array.isArray(x) && Array.isArray(y)) {
        if (canonical([...x].sort()) !== canonical([...y].sort())) fields.push(`${prefix}${key}`);
      } else if (canonical(x) !== canonical(y)) fields.push(`${prefix}${key}`);
    }
  };
  compare(before, after, '');
  return fields;
}

/**
 * The changes that turn `current` into `desired`. Entities absent from `desired` are
 * deleted only with `prune`, so a start-up apply never removes what the admin API added.
 * Sources are created and updated before destinations, destinations deleted before
 * sources, so no reader ever sees a destination naming a missing source. Upserts keep the
 * document's order; deletions go by id.
 */
export function diffConfig(current: ConfigState, desired: ConfigState, options: ApplyOptions = {}): ConfigChange[] {
  const diffKind = <T extends Source | Destination>(kind: EntityKind, now: readonly T[], wanted: readonly T[]) => {
    const existing = new Map(now.map((entity) => [entity.id, entity]));
    const upserts: ConfigChange[] = [];
    for (const entity of wanted) {
      const before = existing.get(entity.id);
      if (!before) {
        upserts.push({ action: 'create', kind, id: entity.id });
        continue;
      }
      const fields = changedFields(before, entity);
      if (fields.length > 0) upserts.push({ action: 'update', kind, id: entity.id, fields });
    }
    const wantedIds = new Set(wanted.map((entity) => entity.id));
    const deletes: ConfigChange[] = options.prune
      ? now
          .filter((entity) => !wantedIds.has(entity.id))
          .map((entity) => entity.id)
          .sort()
          .map((entityId) => ({ action: 'delete', kind, id: entityId }))
      : [];
    return { upserts, deletes };
  };
  const sources = diffKind('source', current.sources, desired.sources);
  const destinations = diffKind('destination', current.destinations, desired.destinations);
  return [...sources.upserts, ...destinations.upserts, ...destinations.deletes, ...sources.deletes];
}
