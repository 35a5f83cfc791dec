import { describe, expect, it } from 'vitest';
import { thrown } from '@tributary/test/harness/thrown';
import type { Destination, Source } from '@tributary/schemas';
import {
  ConfigValidationError,
  configKey,
  crossCheck,
  destinationsUsing,
  diffConfig,
  formatPath,
  isDestination,
  parseConfigDocument,
  parseConfigKey,
  parseDestination,
  parseSource,
  redactDestination,
  HOP_BY_HOP_HEADERS,
  REDACTED_SECRET,
  RESERVED_HEADERS,
  type ConfigState,
  type ValidationIssue,
} from './config-model.js';

const issuesOf = (run: () => unknown): ValidationIssue[] => thrown(run, ConfigValidationError).issues;

const source = (overrides: Record<string, unknown> = {}) => ({ id: 'web', writeKey: 'wk_web_0001', ...overrides });
const destination = (overrides: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) => ({
  id: 'crm-hooks',
  type: 'webhooks',
  sources: ['web'],
  ...overrides,
  settings: { webhooks: [{ url: 'https://hooks.example.com/segment' }], ...settings },
});
const hook = (headers?: unknown) => ({ url: 'https://hooks.example.com/a', ...(headers === undefined ? {} : { headers }) });
/** `count` entries, each with a URL of its own (one URL twice is refused). */
const hooks = (count: number) => Array.from({ length: count }, (_, index) => ({ url: `https://hooks.example.com/${index}` }));

const storedSource: Source = { id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true };
const storedDestination = (overrides: Partial<Destination> = {}): Destination => ({
  id: 'crm-hooks',
  name: 'crm-hooks',
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/segment', headers: {} }] },
  ...overrides,
});

describe('parseSource', () => {
  it('fills name and enabled', () => {
    expect(parseSource(source())).toEqual({ id: 'web', name: 'web', writeKey: 'wk_web_0001', enabled: true });
    expect(parseSource(source({ name: 'Web site', enabled: false }))).toEqual({ id: 'web', name: 'Web site', writeKey: 'wk_web_0001', enabled: false });
  });

  it.each<[string, unknown, ValidationIssue[]]>([
    ['not an object', 'web', [{ path: '', message: 'must be an object' }]],
    ['null', null, [{ path: '', message: 'must be an object' }]],
    ['missing id', { writeKey: 'wk_web_0001' }, [{ path: 'id', message: 'is required' }]],
    ['id not a string', source({ id: 7 }), [{ path: 'id', message: 'must be a string' }]],
    ['id with a space', source({ id: 'my web' }), [{ path: 'id', message: 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit' }]],
    ['id starting with "-"', source({ id: '-web' }), [{ path: 'id', message: 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit' }]],
    ['id of 129 characters', source({ id: 'a'.repeat(129) }), [{ path: 'id', message: 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit' }]],
    ['empty name', source({ name: '' }), [{ path: 'name', message: 'may not be empty' }]],
    ['name of 201 characters', source({ name: 'n'.repeat(201) }), [{ path: 'name', message: 'must be at most 200 characters' }]],
    ['name not a string', source({ name: 3 }), [{ path: 'name', message: 'must be a string' }]],
    ['missing write key', { id: 'web' }, [{ path: 'writeKey', message: 'is required' }]],
    ['write key not a string', source({ writeKey: 12345678 }), [{ path: 'writeKey', message: 'must be a string' }]],
    ['write key of 7 characters', source({ writeKey: 'wk_1234' }), [{ path: 'writeKey', message: 'must be at least 8 characters' }]],
    ['write key of 257 characters', source({ writeKey: 'k'.repeat(257) }), [{ path: 'writeKey', message: 'must be at most 256 characters' }]],
    ['write key with ":"', source({ writeKey: 'wk:web:0001' }), [{ path: 'writeKey', message: 'must be printable ASCII without spaces or ":" (it is sent as the HTTP basic user name)' }]],
    ['write key with a space', source({ writeKey: 'wk web 0001' }), [{ path: 'writeKey', message: 'must be printable ASCII without spaces or ":" (it is sent as the HTTP basic user name)' }]],
    ['enabled not a boolean', source({ enabled: 'yes' }), [{ path: 'enabled', message: 'must be true or false' }]],
    ['unknown field', source({ writekey: 'x' }), [{ path: '', message: 'unknown field: writekey' }]],
    ['unknown fields', source({ a: 1, b: 2 }), [{ path: '', message: 'unknown fields: a, b' }]],
  ])('refuses %s', (_case, input, expected) => {
    expect(issuesOf(() => parseSource(input))).toEqual(expected);
  });

  it('accepts the boundaries of every length rule', () => {
    expect(() => parseSource(source({ id: 'a'.repeat(128), name: 'n'.repeat(200), writeKey: 'k'.repeat(256) }))).not.toThrow();
    expect(() => parseSource(source({ writeKey: 'wk_12345' }))).not.toThrow();
  });

  it('prefixes paths', () => {
    expect(issuesOf(() => parseSource({ id: 'web' }, 'sources[2]'))).toEqual([{ path: 'sources[2].writeKey', message: 'is required' }]);
  });
});

describe('parseDestination', () => {
  it('fills defaults and normalises headers to strings', () => {
    expect(parseDestination(destination({ sources: ['web', 'web', 'app'] }, { webhooks: [hook({ 'X-Team': 'growth', 'X-Retries': 3, 'X-Flag': true })] }))).toEqual({
      id: 'crm-hooks',
      name: 'crm-hooks',
      type: 'webhooks',
      sources: ['web', 'app'],
      enabled: true,
      settings: {
        sharedSecret: null,
        standardWebhooksSecret: null,
        webhooks: [{ url: 'https://hooks.example.com/a', headers: { 'X-Team': 'growth', 'X-Retries': '3', 'X-Flag': 'true' } }],
      },
    });
    expect(parseDestination({ id: 'd', type: 'webhooks', sources: [], settings: { webhooks: [hook()] } }).sources).toEqual([]);
  });

  it('needs sources, so a write that leaves them out does not disconnect the destination from every source', () => {
    expect(issuesOf(() => parseDestination({ id: 'd', type: 'webhooks', settings: { webhooks: [hook()] } }))).toEqual([
      { path: 'sources', message: 'is required: the ids of the sources this destination receives from ([] for none)' },
    ]);
  });

  it.each<[string, unknown, ValidationIssue[]]>([
    ['not an object', [], [{ path: '', message: 'must be an object' }]],
    ['missing id', { type: 'webhooks', sources: [], settings: { webhooks: [hook()] } }, [{ path: 'id', message: 'is required' }]],
    ['bad id', destination({ id: 'crm/hooks' }), [{ path: 'id', message: 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit' }]],
    ['missing type', { id: 'd', sources: [], settings: { webhooks: [hook()] } }, [{ path: 'type', message: 'is required' }]],
    ['another type', destination({ type: 'amplitude' }), [{ path: 'type', message: 'must be "webhooks" (the only destination type)' }]],
    ['sources not a list', destination({ sources: 'web' }), [{ path: 'sources', message: 'must be a list of source ids' }]],
    ['a bad source id', destination({ sources: ['web', 'bad id'] }), [{ path: 'sources[1]', message: 'must be 1-128 characters of letters, digits, "_", "." or "-", starting with a letter or digit' }]],
    ['enabled not a boolean', destination({ enabled: 1 }), [{ path: 'enabled', message: 'must be true or false' }]],
    ['missing settings', { id: 'd', type: 'webhooks', sources: [] }, [{ path: 'settings', message: 'is required' }]],
    ['settings not an object', { id: 'd', type: 'webhooks', sources: [], settings: 'x' }, [{ path: 'settings', message: 'must be an object' }]],
    ['unknown settings field', destination({}, { secret: 'x' }), [{ path: 'settings', message: 'unknown field: secret' }]],
    ['missing webhooks', { id: 'd', type: 'webhooks', sources: [], settings: {} }, [{ path: 'settings.webhooks', message: 'is required' }]],
    ['webhooks not a list', destination({}, { webhooks: 'https://x.example' }), [{ path: 'settings.webhooks', message: 'must be a list of webhook entries' }]],
    ['no webhooks', destination({}, { webhooks: [] }), [{ path: 'settings.webhooks', message: 'needs at least one webhook URL' }]],
    ['six webhooks', destination({}, { webhooks: hooks(6) }), [{ path: 'settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }]],
    ['a webhook that is a string', destination({}, { webhooks: ['https://x.example'] }), [{ path: 'settings.webhooks[0]', message: 'must be an object with a url' }]],
    ['a webhook without url', destination({}, { webhooks: [{ headers: {} }] }), [{ path: 'settings.webhooks[0].url', message: 'is required' }]],
    ['a webhook with an unknown field', destination({}, { webhooks: [{ url: 'https://x.example', method: 'PUT' }] }), [{ path: 'settings.webhooks[0]', message: 'unknown field: method' }]],
    ['a url not a string', destination({}, { webhooks: [{ url: 42 }] }), [{ path: 'settings.webhooks[0].url', message: 'must be a string' }]],
    ['a relative url', destination({}, { webhooks: [{ url: '/hooks' }] }), [{ path: 'settings.webhooks[0].url', message: 'is not an absolute URL (include http:// or https://)' }]],
    ['a url without scheme', destination({}, { webhooks: [{ url: 'hooks.example.com/a' }] }), [{ path: 'settings.webhooks[0].url', message: 'is not an absolute URL (include http:// or https://)' }]],
    ['an ftp url', destination({}, { webhooks: [hook(), { url: 'ftp://files.example.com/in' }] }), [{ path: 'settings.webhooks[1].url', message: 'must use http or https, not ftp' }]],
    ['an overlong url', destination({}, { webhooks: [{ url: `https://x.example/${'a'.repeat(2048)}` }] }), [{ path: 'settings.webhooks[0].url', message: 'must be at most 2048 characters' }]],
    ['headers not an object', destination({}, { webhooks: [hook('X-Team: growth')] }), [{ path: 'settings.webhooks[0].headers', message: 'must be an object of header names to values' }]],
    ['a header value that is an object', destination({}, { webhooks: [hook({ 'X-Team': { a: 1 } })] }), [{ path: 'settings.webhooks[0].headers.X-Team', message: 'must be a string' }]],
    ['a header name with a space', destination({}, { webhooks: [hook({ 'X Team': 'a' })] }), [{ path: 'settings.webhooks[0].headers["X Team"]', message: '"X Team" is not a valid HTTP header name' }]],
    ['a header name with a colon', destination({}, { webhooks: [hook({ 'X-Team:': 'a' })] }), [{ path: 'settings.webhooks[0].headers["X-Team:"]', message: '"X-Team:" is not a valid HTTP header name' }]],
    ['an empty header name', destination({}, { webhooks: [hook({ '': 'a' })] }), [{ path: 'settings.webhooks[0].headers[""]', message: '"" is not a valid HTTP header name' }]],
    ['a header value with CR LF', destination({}, { webhooks: [hook({ 'X-Team': 'a\r\nX-Evil: 1' })] }), [{ path: 'settings.webhooks[0].headers.X-Team', message: 'header values may not contain CR, LF or NUL' }]],
    ['a header value with LF', destination({}, { webhooks: [hook({ 'X-Team': 'a\nb' })] }), [{ path: 'settings.webhooks[0].headers.X-Team', message: 'header values may not contain CR, LF or NUL' }]],
    ['a header value with NUL', destination({}, { webhooks: [hook({ 'X-Team': 'a\0b' })] }), [{ path: 'settings.webhooks[0].headers.X-Team', message: 'header values may not contain CR, LF or NUL' }]],
    ...['euro €', 'bell \x07', 'del \x7f', 'caf\u00e9'].map((value): [string, unknown, ValidationIssue[]] => [
      `a header value HTTP cannot carry (${JSON.stringify(value)})`,
      destination({}, { webhooks: [hook({ 'X-Team': value })] }),
      [{ path: 'settings.webhooks[0].headers.X-Team', message: 'header values may hold only tabs and printable ASCII (other characters cannot be sent in an HTTP header)' }],
    ]),
    ['credentials in an ftp url, not echoed', destination({}, { webhooks: [{ url: 'ftp://alice:s3cr3t@files.example.com/in' }] }), [
      { path: 'settings.webhooks[0].url', message: 'must use http or https, not ftp' },
      { path: 'settings.webhooks[0].url', message: 'must not carry credentials (user:password@host): send them as a static header instead, e.g. "Authorization": "Basic <base64 of user:password>", whose value the admin API never shows' },
    ]],
    ['an overlong header value', destination({}, { webhooks: [hook({ 'X-Team': 'v'.repeat(4097) })] }), [{ path: 'settings.webhooks[0].headers.X-Team', message: 'header values must be at most 4096 characters' }]],
    ['headers repeated in another case', destination({}, { webhooks: [hook({ 'X-Team': 'a', 'x-team': 'b' })] }), [{ path: 'settings.webhooks[0].headers.x-team', message: 'repeats header "X-Team" (header names are case-insensitive)' }]],
    ['21 headers', destination({}, { webhooks: [hook(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])))] }), [{ path: 'settings.webhooks[0].headers', message: 'at most 20 static headers per webhook URL' }]],
    ['an empty shared secret', destination({}, { sharedSecret: '' }), [{ path: 'settings.sharedSecret', message: 'may not be empty' }]],
    ['a numeric shared secret', destination({}, { sharedSecret: 12345 }), [{ path: 'settings.sharedSecret', message: 'must be a string (quote it in YAML)' }]],
    ['an overlong shared secret', destination({}, { sharedSecret: 's'.repeat(1025) }), [{ path: 'settings.sharedSecret', message: 'must be at most 1024 characters' }]],
    ['a malformed Standard Webhooks secret', destination({}, { standardWebhooksSecret: 'secret' }), [{ path: 'settings.standardWebhooksSecret', message: 'must be a Standard Webhooks secret: whsec_ followed by base64' }]],
    ['an unknown field', destination({ url: 'https://x.example' }), [{ path: '', message: 'unknown field: url' }]],
  ])('refuses %s', (_case, input, expected) => {
    expect(issuesOf(() => parseDestination(input))).toEqual(expected);
  });

  it.each(['Content-Type', 'content-length', 'HOST', 'User-Agent', 'X-Signature', 'Transfer-Encoding', 'Connection', 'Content-Encoding', 'webhook-id', 'Webhook-Timestamp', 'webhook-signature'])(
    'refuses the reserved header %s',
    (name) => {
      expect(issuesOf(() => parseDestination(destination({}, { webhooks: [hook({ [name]: 'x' })] })))).toEqual([
        { path: `settings.webhooks[0].headers.${name}`, message: `"${name}" is set by Tributary and cannot be a static header` },
      ]);
    },
  );

  it.each(['Expect', 'keep-alive', 'Upgrade', 'TE', 'Proxy-Connection', 'Trailer'])('refuses the hop-by-hop header %s, which the HTTP client refuses or manages', (name) => {
    expect(issuesOf(() => parseDestination(destination({}, { webhooks: [hook({ [name]: '100-continue' })] })))).toEqual([
      { path: `settings.webhooks[0].headers.${name}`, message: `"${name}" is a hop-by-hop header, managed by the HTTP connection, and cannot be a static header` },
    ]);
    expect(HOP_BY_HOP_HEADERS).toContain(name.toLowerCase());
  });

  it('refuses a header name over 256 characters without making the name the path or quoting all of it', () => {
    const name = `X-${'n'.repeat(100_000)}`;
    const issues = issuesOf(() => parseDestination(destination({}, { webhooks: [hook({ [name]: 'v' })] })));
    expect(issues).toEqual([{ path: 'settings.webhooks[0].headers', message: `header names must be at most 256 characters; "X-${'n'.repeat(30)}"… has 100002` }]);
  });

  it('refuses static headers of one URL over 8192 characters of names and values together', () => {
    const headers = { 'X-A': 'a'.repeat(4096), 'X-B': 'b'.repeat(4096) };
    expect(issuesOf(() => parseDestination(destination({}, { webhooks: [hook(headers)] })))).toEqual([
      { path: 'settings.webhooks[0].headers', message: 'the static headers of one webhook URL may hold at most 8192 characters of names and values together; these hold 8198' },
    ]);
  });

  it('sees a __proto__ header name (zod records drop it unseen) and refuses it, and keeps other Object.prototype names as plain names', () => {
    // As JSON.parse and YAML build it: an own property, not the prototype.
    const headers = JSON.parse('{"__proto__": "secret-token", "X-Ok": "1"}') as Record<string, unknown>;
    expect(issuesOf(() => parseDestination(destination({}, { webhooks: [hook(headers)] }), 'destinations[0]'))).toEqual([
      { path: 'destinations[0].settings.webhooks[0].headers.__proto__', message: '"__proto__" cannot be a static header name' },
    ]);
    const parsed = parseDestination(destination({}, { webhooks: [hook({ constructor: 'c', toString: 't', hasOwnProperty: 'h' })] }));
    expect({ ...parsed.settings.webhooks[0]!.headers }).toEqual({ constructor: 'c', toString: 't', hasOwnProperty: 'h' });
    expect(Object.getPrototypeOf(parsed.settings.webhooks[0]!.headers)).toBeNull();
  });

  it.each<[string, string, string]>([
    ['a leading space', ' https://hooks.example.com/a', 'may not contain spaces'],
    ['a trailing line break', 'https://hooks.example.com/a\n', 'may not contain spaces'],
    ['a tab in the path', 'https://hooks.example.com/a\tb', 'may not contain spaces'],
    ['a line break in the host', 'https://ev\nil.example.com/', 'may not contain spaces'],
    ['a space in the path', 'https://hooks.example.com/a b', 'may not contain spaces'],
    ['a NUL', 'https://hooks.example.com/\0', 'may not contain spaces'],
    ['a DEL', 'https://hooks.example.com/\x7f', 'may not contain spaces'],
    ['no "//" after the scheme', 'https:hooks.example.com/a', 'must start with "http://" or "https://" followed by the host'],
    ['one slash after the scheme', 'http:/hooks.example.com/a', 'must start with "http://" or "https://" followed by the host'],
    ['three slashes after the scheme', 'https:///hooks.example.com/a', 'must start with "http://" or "https://" followed by the host'],
    ['backslashes after the scheme', 'https:\\\\hooks.example.com/a', 'must start with "http://" or "https://" followed by the host'],
  ])('refuses a URL with %s, which would be sent elsewhere than it reads', (_case, url, message) => {
    const issues = issuesOf(() => parseDestination(destination({}, { webhooks: [{ url }] })));
    expect(issues).toEqual([{ path: 'settings.webhooks[0].url', message: expect.stringContaining(message) as unknown as string }]);
  });

  it('stores a normal URL exactly as written', () => {
    for (const url of ['HTTPS://Hooks.Example.com:8443/a?b=c%20d#x', 'http://127.0.0.1:8090/hooks', 'https://[::1]/x', 'https://exämple.com/ü']) {
      expect(parseDestination(destination({}, { webhooks: [{ url }] })).settings.webhooks[0]!.url).toBe(url);
    }
  });

  it('refuses a URL twice in one destination, also when written another way', () => {
    expect(issuesOf(() => parseDestination(destination({}, { webhooks: [{ url: 'https://h.example.com/a' }, { url: 'https://b.example.com/' }, { url: 'https://h.example.com/a' }] })))).toEqual([
      { path: 'settings.webhooks[2].url', message: 'is the same URL as webhooks[0]; each URL may appear once per destination' },
    ]);
    expect(issuesOf(() => parseDestination(destination({}, { webhooks: [{ url: 'https://h.example.com' }, { url: 'HTTPS://H.example.com:443/' }] }), 'destinations[3]'))).toEqual([
      { path: 'destinations[3].settings.webhooks[1].url', message: 'is the same URL as webhooks[0]; each URL may appear once per destination' },
    ]);
  });

  it('reserves exactly the headers the dispatcher sets', () => {
    expect(RESERVED_HEADERS).toEqual(expect.arrayContaining(['content-type', 'content-length', 'host', 'user-agent', 'x-signature']));
  });

  it('accepts the boundaries: five webhooks, 20 headers, 4096-character values, 256-character names, 8192 characters of headers, 1024-character secrets', () => {
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, 'v']));
    const longValue = { 'X-Long': 'v'.repeat(4096) };
    // 256 + 7936 = 8192 characters of names and values together.
    const fullest = { ['N'.repeat(256)]: 'v'.repeat(4096), 'X-Rest': 'v'.repeat(8192 - 256 - 4096 - 'X-Rest'.length) };
    const parsed = parseDestination(
      destination({}, { sharedSecret: 's'.repeat(1024), webhooks: [hook(twenty), { url: 'https://b.example/', headers: longValue }, { url: 'https://c.example/', headers: fullest }, { url: 'https://d.example/' }, { url: 'http://plain.example/x' }] }),
    );
    expect(parsed.settings.webhooks).toHaveLength(5);
  });

  it('reports every issue at once', () => {
    expect(issuesOf(() => parseDestination({ id: 'd', type: 'other', sources: [], settings: { webhooks: [{ url: 'nope', headers: { Host: 'x' } }] } }, 'destinations[0]'))).toEqual([
      { path: 'destinations[0].type', message: 'must be "webhooks" (the only destination type)' },
      { path: 'destinations[0].settings.webhooks[0].url', message: 'is not an absolute URL (include http:// or https://)' },
      { path: 'destinations[0].settings.webhooks[0].headers.Host', message: '"Host" is set by Tributary and cannot be a static header' },
    ]);
  });

  it('keeps a stored secret when the redaction marker is sent back', () => {
    const existing = storedDestination({ settings: { sharedSecret: 'k3ep', standardWebhooksSecret: 'whsec_c2VjcmV0', webhooks: [] } });
    const parsed = parseDestination(destination({}, { sharedSecret: REDACTED_SECRET, standardWebhooksSecret: REDACTED_SECRET }), '', existing);
    expect(parsed.settings.sharedSecret).toBe('k3ep');
    expect(parsed.settings.standardWebhooksSecret).toBe('whsec_c2VjcmV0');
    expect(parseDestination(destination({}, { sharedSecret: 'rotated' }), '', existing).settings.sharedSecret).toBe('rotated');
    expect(parseDestination(destination({}, { sharedSecret: null }), '', existing).settings.sharedSecret).toBeNull();
    expect(parseDestination(destination(), '', existing).settings.sharedSecret).toBeNull();
  });

  it('refuses the redaction marker when no secret is stored', () => {
    expect(issuesOf(() => parseDestination(destination({}, { sharedSecret: REDACTED_SECRET }), 'destinations[1]'))).toEqual([
      {
        path: 'destinations[1].settings.sharedSecret',
        message: 'is "[redacted]" (what reads show) but no secret is stored for destination "crm-hooks"; give the secret itself',
      },
    ]);
    expect(issuesOf(() => parseDestination(destination({}, { standardWebhooksSecret: REDACTED_SECRET }), '', storedDestination()))).toEqual([
      {
        path: 'settings.standardWebhooksSecret',
        message: 'is "[redacted]" (what reads show) but no secret is stored for destination "crm-hooks"; give the secret itself',
      },
    ]);
  });
});

describe('parseConfigDocument', () => {
  const document = {
    sources: [source({ name: 'Web site' }), { id: 'app', writeKey: 'wk_app_0001' }],
    destinations: [destination({ sources: ['web', 'app'] }, { sharedSecret: 'change-me', webhooks: [hook({ 'X-Team': 'growth' })] })],
  };

  it('parses the design example shape', () => {
    const state = parseConfigDocument(document);
    expect(state.sources.map((s) => s.id)).toEqual(['web', 'app']);
    expect(state.destinations[0]?.settings.sharedSecret).toBe('change-me');
  });

  it('reads an object without lists as an empty document, which may prune everything on purpose', () => {
    expect(parseConfigDocument({})).toEqual({ sources: [], destinations: [] });
    const current: ConfigState = { sources: [storedSource], destinations: [storedDestination()] };
    const desired = parseConfigDocument({ sources: [], destinations: [] }, current, { prune: true });
    expect(diffConfig(current, desired, { prune: true })).toEqual([
      { action: 'delete', kind: 'destination', id: 'crm-hooks' },
      { action: 'delete', kind: 'source', id: 'web' },
    ]);
  });

  it.each<[string, unknown, ValidationIssue[]]>([
    // No document is not an empty one: with prune, that deleted every source and destination.
    ['null', null, [{ path: '', message: 'must be an object with "sources" and "destinations" lists' }]],
    ['nothing', undefined, [{ path: '', message: 'must be an object with "sources" and "destinations" lists' }]],
    ['a list', [], [{ path: '', message: 'must be an object with "sources" and "destinations" lists' }]],
    ['sources not a list', { sources: {} }, [{ path: 'sources', message: 'must be a list' }]],
    ['destinations not a list', { destinations: 'crm' }, [{ path: 'destinations', message: 'must be a list' }]],
    ['an unknown top-level key', { sources: [], destination: [] }, [{ path: '', message: 'unknown field: destination' }]],
  ])('refuses %s', (_case, input, expected) => {
    expect(issuesOf(() => parseConfigDocument(input))).toEqual(expected);
  });

  it('names each entity by its index', () => {
    expect(issuesOf(() => parseConfigDocument({ sources: [source(), { id: 'app' }], destinations: [destination({}, { webhooks: hooks(6) })] }))).toEqual([
      { path: 'sources[1].writeKey', message: 'is required' },
      { path: 'destinations[0].settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' },
    ]);
  });

  it('refuses repeated ids, shared write keys and unknown sources', () => {
    expect(
      issuesOf(() =>
        parseConfigDocument({
          sources: [source(), source({ writeKey: 'wk_other_01' }), { id: 'app', writeKey: 'wk_web_0001' }],
          destinations: [destination(), destination({ sources: ['web', 'mobile'] })],
        }),
      ),
    ).toEqual([
      { path: 'sources[1].id', message: '"web" is already the id of sources[0]' },
      { path: 'destinations[1].id', message: '"crm-hooks" is already the id of destinations[0]' },
      { path: 'sources[2].writeKey', message: 'is already the write key of source "web"; write keys must be unique' },
      { path: 'destinations[1].sources[1]', message: 'unknown source "mobile"' },
    ]);
  });

  it('checks destinations against existing sources, and only the desired ones with prune', () => {
    const existing: ConfigState = { sources: [{ id: 'legacy', name: 'Legacy', writeKey: 'wk_legacy_1', enabled: true }], destinations: [] };
    const onLegacy = { destinations: [destination({ sources: ['legacy'] })] };
    expect(parseConfigDocument(onLegacy, existing).destinations[0]?.sources).toEqual(['legacy']);
    expect(issuesOf(() => parseConfigDocument(onLegacy, existing, { prune: true }))).toEqual([{ path: 'destinations[0].sources[0]', message: 'unknown source "legacy"' }]);
  });

  it('checks write keys against the sources that remain', () => {
    const existing: ConfigState = { sources: [{ id: 'legacy', name: 'Legacy', writeKey: 'wk_web_0001', enabled: true }], destinations: [] };
    expect(issuesOf(() => parseConfigDocument({ sources: [source()] }, existing))).toEqual([
      { path: 'sources[0].writeKey', message: 'is already the write key of source "legacy"; write keys must be unique' },
    ]);
    // Pruned, "legacy" goes away and its key is free.
    expect(() => parseConfigDocument({ sources: [source()] }, existing, { prune: true })).not.toThrow();
    // Re-keying an existing source to its own key is no clash.
    expect(() => parseConfigDocument({ sources: [{ id: 'legacy', writeKey: 'wk_web_0001' }] }, existing)).not.toThrow();
  });

  it('keeps the stored secret of an existing destination sent back redacted', () => {
    const existing: ConfigState = {
      sources: [storedSource],
      destinations: [storedDestination({ settings: { sharedSecret: 'k3ep', standardWebhooksSecret: null, webhooks: [] } })],
    };
    const state = parseConfigDocument({ destinations: [destination({}, { sharedSecret: REDACTED_SECRET })] }, existing);
    expect(state.destinations[0]?.settings.sharedSecret).toBe('k3ep');
  });
});

describe('crossCheck', () => {
  it('accepts a consistent state', () => {
    expect(crossCheck({ sources: [storedSource], destinations: [storedDestination()] }, { sources: [], destinations: [] })).toEqual([]);
  });
});

describe('diffConfig', () => {
  const web = storedSource;
  const app: Source = { id: 'app', name: 'App', writeKey: 'wk_app_0001', enabled: true };
  const crm = storedDestination();
  const old = storedDestination({ id: 'old', sources: ['app'] });
  const current: ConfigState = { sources: [web, app], destinations: [crm, old] };

  it('finds nothing to do for the same state', () => {
    expect(diffConfig(current, current)).toEqual([]);
    expect(diffConfig(current, current, { prune: true })).toEqual([]);
  });

  it('ignores header order and source order', () => {
    const a = storedDestination({ sources: ['web', 'app'], settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://x.example', headers: { A: '1', B: '2' } }] } });
    const b = storedDestination({ sources: ['app', 'web'], settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://x.example', headers: { B: '2', A: '1' } }] } });
    expect(diffConfig({ sources: [], destinations: [a] }, { sources: [], destinations: [b] })).toEqual([]);
  });

  it('names changed fields, settings one level down, secrets by name only', () => {
    const changed = storedDestination({
      enabled: false,
      settings: { sharedSecret: 'new-secret', standardWebhooksSecret: null, webhooks: [{ url: 'https://other.example/x', headers: {} }] },
    });
    expect(diffConfig(current, { sources: [{ ...web, name: 'Web site' }], destinations: [changed] })).toEqual([
      { action: 'update', kind: 'source', id: 'web', fields: ['name'] },
      { action: 'update', kind: 'destination', id: 'crm-hooks', fields: ['enabled', 'settings.sharedSecret', 'settings.webhooks'] },
    ]);
  });

  it('deletes only with prune', () => {
    expect(diffConfig(current, { sources: [web], destinations: [crm] })).toEqual([]);
    expect(diffConfig(current, { sources: [web], destinations: [crm] }, { prune: true })).toEqual([
      { action: 'delete', kind: 'destination', id: 'old' },
      { action: 'delete', kind: 'source', id: 'app' },
    ]);
  });

  it('orders source upserts, destination upserts, destination deletes, source deletes', () => {
    const before: ConfigState = {
      sources: [{ ...app, id: 'z-gone' }, { ...app, id: 'a-gone', writeKey: 'wk_gone_001' }, web],
      destinations: [storedDestination({ id: 'z-old' }), storedDestination({ id: 'a-old' }), crm],
    };
    const after: ConfigState = {
      sources: [{ ...web, enabled: false }, { ...app, id: 'new-source' }],
      destinations: [storedDestination({ id: 'new-dest', sources: ['new-source'] }), storedDestination({ name: 'CRM' })],
    };
    expect(diffConfig(before, after, { prune: true })).toEqual([
      { action: 'update', kind: 'source', id: 'web', fields: ['enabled'] },
      { action: 'create', kind: 'source', id: 'new-source' },
      { action: 'create', kind: 'destination', id: 'new-dest' },
      { action: 'update', kind: 'destination', id: 'crm-hooks', fields: ['name'] },
      { action: 'delete', kind: 'destination', id: 'a-old' },
      { action: 'delete', kind: 'destination', id: 'z-old' },
      { action: 'delete', kind: 'source', id: 'a-gone' },
      { action: 'delete', kind: 'source', id: 'z-gone' },
    ]);
  });
});

describe('write-only credentials', () => {
  const withKey = storedDestination({
    settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/segment', headers: { Authorization: 'Bearer live_1234', 'X-Team': 'growth' } }] },
  });

  it('refuses a webhook URL that carries user:password, without echoing it', () => {
    const issues = issuesOf(() => parseDestination(destination({}, { webhooks: [{ url: 'https://alice:hunter2@hooks.example.com/segment' }] })));
    expect(issues).toEqual([{ path: 'settings.webhooks[0].url', message: expect.stringContaining('must not carry credentials') as unknown as string }]);
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });

  it('shows static header names but never their values', () => {
    const redacted = redactDestination(withKey);
    expect(redacted.settings.webhooks).toEqual([{ url: 'https://hooks.example.com/segment', headers: { Authorization: REDACTED_SECRET, 'X-Team': REDACTED_SECRET } }]);
    expect(JSON.stringify(redacted)).not.toContain('live_1234');
  });

  it('keeps the stored value of a header sent back redacted, and takes a new value as given', () => {
    const applied = parseDestination(
      destination({}, { webhooks: [{ url: 'https://hooks.example.com/segment', headers: { authorization: REDACTED_SECRET, 'X-Team': 'data' } }] }),
      '',
      withKey,
    );
    expect(applied.settings.webhooks[0]!.headers).toEqual({ authorization: 'Bearer live_1234', 'X-Team': 'data' });
  });

  describe('a redacted header value is kept only from the stored entry with exactly the same URL', () => {
    const twoHosts = storedDestination({
      settings: {
        sharedSecret: null,
        standardWebhooksSecret: null,
        webhooks: [
          { url: 'https://a.example.com/hook', headers: { Authorization: 'Bearer token-for-A' } },
          { url: 'https://b.example.com/hook', headers: { Authorization: 'Bearer token-for-B' } },
        ],
      },
    });
    const readBack = redactDestination(twoHosts);

    it('keeps each entry\'s value when entries move', () => {
      const reordered = parseDestination(destination({}, { webhooks: [readBack.settings.webhooks[1], readBack.settings.webhooks[0]] }), '', twoHosts);
      expect(reordered.settings.webhooks).toEqual([
        { url: 'https://b.example.com/hook', headers: { Authorization: 'Bearer token-for-B' } },
        { url: 'https://a.example.com/hook', headers: { Authorization: 'Bearer token-for-A' } },
      ]);
    });

    it('refuses the marker for a URL that changed, rather than sending the value at its position to the new host', () => {
      // Entry A dropped, B moved to a new host: position 0 held A's Authorization.
      const moved = { url: 'https://new-b.example.net/hook', headers: readBack.settings.webhooks[1]!.headers };
      const issues = issuesOf(() => parseDestination(destination({}, { webhooks: [moved] }), '', twoHosts));
      expect(issues).toEqual([
        {
          path: 'settings.webhooks[0].headers.Authorization',
          message: 'is "[redacted]" (what reads show), but this destination has no stored webhook with exactly this URL, so there is no value to keep: send the value again',
        },
      ]);
      // Written another way is another URL here: the stored text is what is matched.
      const recased = { url: 'HTTPS://a.example.com/hook', headers: readBack.settings.webhooks[0]!.headers };
      expect(issuesOf(() => parseDestination(destination({}, { webhooks: [recased] }), '', twoHosts))[0]?.path).toBe('settings.webhooks[0].headers.Authorization');
    });

    it('refuses the marker where two stored entries share the URL (written before such were refused)', () => {
      const doubled = storedDestination({
        settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://a.example.com/hook', headers: { 'X-Key': 'one' } }, { url: 'https://a.example.com/hook', headers: { 'X-Key': 'two' } }] },
      });
      expect(issuesOf(() => parseDestination(destination({}, { webhooks: [{ url: 'https://a.example.com/hook', headers: { 'X-Key': REDACTED_SECRET } }] }), '', doubled))).toHaveLength(1);
    });

    it('applies the same rule to a declarative document', () => {
      const existing: ConfigState = { sources: [storedSource], destinations: [twoHosts] };
      const moved = { url: 'https://new-b.example.net/hook', headers: { Authorization: REDACTED_SECRET } };
      expect(issuesOf(() => parseConfigDocument({ destinations: [destination({}, { webhooks: [moved] })] }, existing))).toEqual([
        { path: 'destinations[0].settings.webhooks[0].headers.Authorization', message: expect.stringContaining('send the value again') as unknown as string },
      ]);
    });
  });

  it('refuses a redacted header value with nothing stored for it', () => {
    const issues = issuesOf(() => parseDestination(destination({}, { webhooks: [{ url: 'https://other.example.com/', headers: { 'X-Key': REDACTED_SECRET } }] }), '', storedDestination()));
    expect(issues[0]).toMatchObject({ path: 'settings.webhooks[0].headers.X-Key' });
  });
});

describe('helpers', () => {
  it('redacts secrets that are set and shows null for those that are not', () => {
    const withSecret = storedDestination({ settings: { sharedSecret: 's3cret', standardWebhooksSecret: 'whsec_c2VjcmV0', webhooks: [] } });
    expect(redactDestination(withSecret).settings).toEqual({ sharedSecret: REDACTED_SECRET, standardWebhooksSecret: REDACTED_SECRET, webhooks: [] });
    expect(redactDestination(storedDestination()).settings.sharedSecret).toBeNull();
    expect(JSON.stringify(redactDestination(withSecret))).not.toContain('s3cret');
    expect(withSecret.settings.sharedSecret).toBe('s3cret');
  });

  it('lists the destinations that use a source', () => {
    const state: ConfigState = { sources: [storedSource], destinations: [storedDestination({ id: 'b' }), storedDestination({ id: 'a' }), storedDestination({ id: 'c', sources: [] })] };
    expect(destinationsUsing(state, 'web')).toEqual(['a', 'b']);
    expect(destinationsUsing(state, 'app')).toEqual([]);
  });

  it('builds and reads config keys', () => {
    expect(configKey('destination', 'crm-hooks')).toBe('destination/crm-hooks');
    expect(parseConfigKey('source/web')).toEqual({ kind: 'source', id: 'web' });
    expect(parseConfigKey('audience/x')).toBeUndefined();
    expect(parseConfigKey('source')).toBeUndefined();
  });

  it('tells destinations from sources', () => {
    expect(isDestination(storedDestination())).toBe(true);
    expect(isDestination(storedSource)).toBe(false);
  });

  it('formats paths', () => {
    expect(formatPath('', ['settings', 'webhooks', 0, 'headers', 'Host'])).toBe('settings.webhooks[0].headers.Host');
    expect(formatPath('destinations[2]', ['settings', 'webhooks', 5])).toBe('destinations[2].settings.webhooks[5]');
    expect(formatPath('', ['headers', 'X.Team'])).toBe('headers["X.Team"]');
  });
});
