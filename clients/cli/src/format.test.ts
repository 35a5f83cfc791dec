import { formatAudienceSync } from './commands/audience.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { Destination, Source } from '@tributary/schemas';
import { diffConfig, parseConfigDocument, parseConfigYaml, redactDestination, type ConfigChange, type ConfigState } from '@tributary/shared';
import { formatChange, formatConfigYaml, formatIssues, formatSummary } from './format.js';

describe('formatChange', () => {
  it('prints creates, updates with their fields, and deletes', () => {
    expect(formatChange({ action: 'create', kind: 'source', id: 'web' })).toBe('+ source web');
    expect(formatChange({ action: 'update', kind: 'destination', id: 'crm-hooks', fields: ['settings.webhooks', 'settings.sharedSecret'] })).toBe(
      '~ destination crm-hooks (settings.webhooks, settings.sharedSecret)',
    );
    expect(formatChange({ action: 'delete', kind: 'destination', id: 'old' })).toBe('- destination old');
  });
});

describe('formatSummary', () => {
  const changes: ConfigChange[] = [
    { action: 'create', kind: 'source', id: 'a' },
    { action: 'create', kind: 'destination', id: 'b' },
    { action: 'update', kind: 'destination', id: 'c', fields: ['enabled'] },
    { action: 'delete', kind: 'source', id: 'd' },
  ];

  it('counts what a dry run would do and what an apply did', () => {
    expect(formatSummary(changes, true)).toBe('dry run: 2 to create, 1 to update, 1 to delete; nothing written');
    expect(formatSummary(changes, false)).toBe('applied: 2 created, 1 updated, 1 deleted');
    expect(formatSummary([], false)).toBe('no changes');
    expect(formatSummary([], true)).toBe('no changes');
  });
});

describe('formatIssues', () => {
  it('prints one indented line per issue, with its path', () => {
    expect(formatIssues([{ path: 'destinations[0].settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }, { path: '', message: 'must be an object' }])).toEqual([
      '  destinations[0].settings.webhooks[5]: at most 5 webhook URLs per destination',
      '  must be an object',
    ]);
  });
});

describe('formatConfigYaml', () => {
  it('prints the declarative shape, leaving out secrets that are not set', () => {
    const text = formatConfigYaml({
      sources: [{ id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true }],
      destinations: [{ id: 'crm', settings: { sharedSecret: '[redacted]', standardWebhooksSecret: null, webhooks: [{ url: 'https://x.example', headers: {} }] } }],
    });
    expect(parse(text)).toEqual({
      sources: [{ id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true }],
      destinations: [{ id: 'crm', settings: { sharedSecret: '[redacted]', webhooks: [{ url: 'https://x.example', headers: {} }] } }],
    });
  });
});

describe('formatConfigYaml round trip', () => {
  it('writes a literal ${ as $${, so the printed config applies back as no changes whatever the environment holds', () => {
    const web: Source = { id: 'web', name: 'Price ${USD} and $${EUR} and $5', writeKey: 'wk_web_0001', enabled: true };
    const crm: Destination = {
      id: 'crm',
      name: 'CRM ${',
      type: 'webhooks',
      sources: ['web'],
      enabled: true,
      settings: { sharedSecret: 's3cret', standardWebhooksSecret: null, webhooks: [{ url: 'https://h.example.com/a${HOME}', headers: { 'X-Key': 'k' } }] },
    };
    const current: ConfigState = { sources: [web], destinations: [crm] };
    // As `config get` receives it from GET /config: destinations redacted.
    const destinations = current.destinations.map((destination) => {
      const { settings, ...rest } = redactDestination(destination);
      return { ...rest, settings: { ...settings } };
    });
    const text = formatConfigYaml({ sources: current.sources, destinations });
    const document = parseConfigYaml(text, { USD: 'dollars', EUR: 'euros', HOME: '/root' });
    expect(document).toMatchObject({ sources: [{ name: web.name }], destinations: [{ name: crm.name, settings: { webhooks: [{ url: crm.settings.webhooks[0]!.url }] } }] });
    expect(diffConfig(current, parseConfigDocument(document, current))).toEqual([]);
  });
});

describe('formatAudienceSync', () => {
  it('says what changed in one line', () => {
    expect(
      formatAudienceSync({ audience: 'Gold', trait: 'gold', firstSync: false, members: 10, added: 2, removed: 1, changed: 3, unchanged: 5, messages: 6 }),
    ).toBe('Gold: 10 members, trait gold; 2 joined, 1 left, 3 changed value, 5 unchanged → 6 Identify messages');
  });
});
