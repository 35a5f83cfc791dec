import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../segment/json-objects.js';
import { contextIntegrations, webhooksEnabled } from './integrations.js';

type Setting = { label: string; value?: unknown };

const ALL: Setting[] = [{ label: 'true', value: true }, { label: 'false', value: false }, { label: 'absent' }];
const WEBHOOKS: Setting[] = [
  { label: 'true', value: true },
  { label: 'false', value: false },
  { label: 'absent' },
  { label: 'object', value: { headers: { 'X-Extra': '1' } } },
];

/** The rule written out independently of the implementation: Webhooks decides, else All, else on. */
function expected(all: Setting, webhooks: Setting): boolean {
  if ('value' in webhooks) return webhooks.value !== false;
  if ('value' in all) return all.value !== false;
  return true;
}

function objectFor(all: Setting, webhooks: Setting): JsonObject {
  const integrations: JsonObject = {};
  if ('value' in all) integrations.All = all.value;
  if ('value' in webhooks) integrations.Webhooks = webhooks.value;
  return integrations;
}

const cases = ALL.flatMap((all) => WEBHOOKS.map((webhooks) => ({ all, webhooks, enabled: expected(all, webhooks) })));

describe('the integrations truth table (All × Webhooks)', () => {
  it('covers all twelve combinations, with the expected outcome spelled out', () => {
    expect(cases.map(({ all, webhooks, enabled }) => `All=${all.label} Webhooks=${webhooks.label} → ${enabled ? 'on' : 'off'}`)).toEqual([
      'All=true Webhooks=true → on',
      'All=true Webhooks=false → off',
      'All=true Webhooks=absent → on',
      'All=true Webhooks=object → on',
      'All=false Webhooks=true → on',
      'All=false Webhooks=false → off',
      'All=false Webhooks=absent → off',
      'All=false Webhooks=object → on',
      'All=absent Webhooks=true → on',
      'All=absent Webhooks=false → off',
      'All=absent Webhooks=absent → on',
      'All=absent Webhooks=object → on',
    ]);
  });

  it.each(cases)('top-level: All=$all.label, Webhooks=$webhooks.label → $enabled', ({ all, webhooks, enabled }) => {
    expect(webhooksEnabled(objectFor(all, webhooks), null)).toBe(enabled);
  });

  it.each(cases)('only in context.integrations: All=$all.label, Webhooks=$webhooks.label → $enabled', ({ all, webhooks, enabled }) => {
    const context = { integrations: objectFor(all, webhooks) };
    expect(webhooksEnabled(null, contextIntegrations(context))).toBe(enabled);
  });

  it.each(cases)('wrong-case keys beside All=$all.label, Webhooks=$webhooks.label change nothing', ({ all, webhooks, enabled }) => {
    const integrations = { ...objectFor(all, webhooks), webhooks: !enabled, WEBHOOKS: !enabled, all: !enabled, ALL: !enabled, webHooks: !enabled };
    expect(webhooksEnabled(integrations, null)).toBe(enabled);
  });
});

describe('wrong-case keys alone', () => {
  it.each(['webhooks', 'WEBHOOKS', 'WebHooks', 'all', 'ALL', ' All', 'Webhooks '])('%j: false means nothing, the message goes', (key) => {
    expect(webhooksEnabled({ [key]: false }, null)).toBe(true);
    expect(webhooksEnabled(null, { [key]: false })).toBe(true);
  });
});

describe('values other than booleans', () => {
  it.each([
    ['the string "false"', 'false'],
    ['null', null],
    ['0', 0],
    ['an empty object', {}],
    ['an empty string', ''],
  ])('Webhooks set to %s enables (only the boolean false disables)', (_label, value) => {
    expect(webhooksEnabled({ All: false, Webhooks: value }, null)).toBe(true);
  });

  it('All set to a non-boolean enables too', () => {
    expect(webhooksEnabled({ All: 'no' }, null)).toBe(true);
  });
});

describe('top-level and context.integrations together', () => {
  it('merges per key, the top-level value winning', () => {
    expect(webhooksEnabled({ Webhooks: true }, { Webhooks: false })).toBe(true);
    expect(webhooksEnabled({ Webhooks: false }, { Webhooks: true })).toBe(false);
    expect(webhooksEnabled({ All: true }, { All: false })).toBe(true);
  });

  it('a Webhooks key in one place beats All in the other', () => {
    expect(webhooksEnabled({ All: false }, { Webhooks: true })).toBe(true);
    expect(webhooksEnabled({ All: true }, { Webhooks: false })).toBe(false);
  });

  it('no object anywhere → enabled', () => {
    expect(webhooksEnabled(null, null)).toBe(true);
    expect(webhooksEnabled({}, {})).toBe(true);
  });
});

describe('contextIntegrations', () => {
  it('returns the nested object', () => {
    expect(contextIntegrations({ ip: '1.2.3.4', integrations: { All: false } })).toEqual({ All: false });
  });

  it.each([[true], [null], [['Webhooks']], ['All']])('ignores a non-object integrations value %j', (value) => {
    expect(contextIntegrations({ integrations: value })).toBeNull();
  });

  it('ignores an inherited key', () => {
    const context = Object.create({ integrations: { Webhooks: false } }) as Record<string, unknown>;
    expect(contextIntegrations(context)).toBeNull();
  });
});
