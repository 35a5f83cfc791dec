import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { thrown } from '@tributary/test/harness/thrown';
import type { ConfigState } from '@tributary/shared';
import { changeRecords, checkAudienceName, MAX_AUDIENCE_MEMBERS, parseJsonSnapshot, planAudienceSync, snakeCase } from './audience-plan.js';
import { AdminError } from './errors.js';

describe('snakeCase', () => {
  it.each([
    ['High Value Users', 'high_value_users'],
    ['Churn-Risk 30d', 'churn_risk_30d'],
    ['highValueUsers', 'high_value_users'],
    ['ABTest Group', 'ab_test_group'],
    ['  trailing & leading  ', 'trailing_leading'],
    ['Käufer (EU)', 'kaufer_eu'],
    ['already_snake_case', 'already_snake_case'],
    ['Users30Days', 'users30_days'],
    ['!!!', ''],
    // Segment's audience key for the same name.
    ['VIP Clients', 'vip_clients'],
    // Letters of every script are kept: these were `vip` (both) and refused as letterless.
    ['VIP Клиенты', 'vip_клиенты'],
    ['VIP Пользователи', 'vip_пользователи'],
    ['Клиенты', 'клиенты'],
    ['高価値ユーザー', '高価値ユーザー'],
    ['ВипКлиенты', 'вип_клиенты'],
    ['ΆλφαΒήτα', 'άλφα_βήτα'],
    ['उपयोगकर्ता', 'उपयोगकर्ता'],
    // Marks of other scripts are part of the letter; composed or decomposed, one trait, composed.
    ['Новый', 'новый'],
    ['Нови\u0306 Fans', 'новй_fans'],
    ['Нов\u0439 Fans', 'новй_fans'],
    ['ｻﾞｰ', 'ザー'],
    ['Ka\u0308ufer (EU)', 'kaufer_eu'],
    // Latin letters NFKD keeps whole are spelt in ASCII, as Segment does.
    ['Straße', 'strasse'],
    ['ÆgirØl', 'aegir_ol'],
  ])('%s → %s', (name, expected) => {
    expect(snakeCase(name)).toBe(expected);
  });

  // The rule before letters of every script were kept; ASCII names must keep their traits.
  const asciiRule = (name: string) =>
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toLowerCase();

  it('gives every ASCII name the trait it had before', () => {
    const ascii = fc.string({ unit: fc.constantFrom(...'aAbBzZ09 -_.&(/'.split('')), maxLength: 24 });
    fc.assert(
      fc.property(fc.oneof(ascii, fc.string({ unit: 'binary-ascii', maxLength: 24 })), (name) => {
        expect(snakeCase(name)).toBe(asciiRule(name));
      }),
    );
  });
});

describe('checkAudienceName', () => {
  it.each(['Клиенты', '高価値ユーザー', 'Ωmega'])('accepts %s, a name without ASCII letters', (name) => {
    expect(checkAudienceName(name)).toBe(name);
  });
});

const config: ConfigState = {
  sources: [
    { id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true },
    { id: 'old', name: 'Old', writeKey: 'wk_old_0001', enabled: false },
  ],
  destinations: [],
};

let counter = 0;
const newMessageId = () => `m-${++counter}`;
const NOW = 1_700_000_000_000;
const refusal = (run: () => unknown): AdminError => thrown(run, AdminError);

describe('planAudienceSync', () => {
  it('names the trait and finds the source', () => {
    expect(planAudienceSync('High Value Users', 'web', config)).toEqual({ audience: 'High Value Users', trait: 'high_value_users', source: config.sources[0] });
  });

  it.each<[string, string, string | undefined, number, string, Array<{ path: string; message: string }>]>([
    ['a name with "/"', 'a/b', 'web', 400, 'invalid_request', [{ path: 'name', message: 'may not contain "/"' }]],
    ['a name without letters or digits', '!!!', 'web', 400, 'invalid_request', [{ path: 'name', message: 'needs at least one letter or digit (its snake_case form is the trait name)' }]],
    ['a name of 201 characters', 'a'.repeat(201), 'web', 400, 'invalid_request', [{ path: 'name', message: 'must be 1-200 characters' }]],
    ['a missing sourceId', 'A', undefined, 400, 'invalid_request', [{ path: 'sourceId', message: 'is required' }]],
    ['an unknown source', 'A', 'ios', 400, 'invalid_request', [{ path: 'sourceId', message: 'unknown source "ios"' }]],
    ['a disabled source', 'A', 'old', 409, 'source_disabled', []],
  ])('refuses %s', (_case, name, sourceId, status, code, issues) => {
    const error = refusal(() => planAudienceSync(name, sourceId, config));
    expect([error.status, error.code, error.issues]).toEqual([status, code, issues]);
  });
});

describe('parseJsonSnapshot', () => {
  it.each<[string, unknown, Array<{ path: string; message: string }>]>([
    ['missing userIds', { sourceId: 'web' }, [{ path: 'userIds', message: 'is required' }]],
    ['userIds not a list', { sourceId: 'web', userIds: 'u1' }, [{ path: 'userIds', message: 'must be a list of user ids' }]],
    ['an empty user id', { sourceId: 'web', userIds: ['u1', ''] }, [{ path: 'userIds[1]', message: 'may not be empty' }]],
    ['a numeric user id', { sourceId: 'web', userIds: [7] }, [{ path: 'userIds[0]', message: 'must be a string' }]],
    // The router quarantines an id past 512: the member would be recorded and never told.
    ['a user id longer than the router takes', { sourceId: 'web', userIds: ['u'.repeat(513)] }, [{ path: 'userIds[0]', message: 'must be at most 512 characters' }]],
    [
      'too many members',
      { sourceId: 'web', userIds: Array.from({ length: MAX_AUDIENCE_MEMBERS + 1 }, (_, i) => `u${i}`) },
      [{ path: 'userIds', message: 'at most 50000 members in a JSON snapshot; send larger audiences as application/x-ndjson' }],
    ],
    ['an unknown field', { sourceId: 'web', userIds: [], members: [] }, [{ path: '', message: 'unknown field: members' }]],
  ])('refuses %s', (_case, body, issues) => {
    const error = refusal(() => parseJsonSnapshot(body));
    expect([error.status, error.code, error.issues]).toEqual([400, 'invalid_request', issues]);
  });
});

describe('changeRecords', () => {
  const sync = planAudienceSync('High Value Users', 'web', config);

  it('a member who joins gets an Identify with the trait true and a membership record', () => {
    const { message, membership } = changeRecords({ kind: 'join', userId: 'u1', value: undefined }, sync, NOW, newMessageId);
    expect(message).toMatchObject({ type: 'identify', sourceId: 'web', userId: 'u1', anonymousId: null, timestamp: NOW, receivedAt: NOW, traits: '{"high_value_users":true}' });
    expect(JSON.parse(message.context!)).toEqual({ personas: { computation_class: 'audience', computation_key: 'high_value_users', computation_name: 'High Value Users' } });
    expect(membership).toEqual({ key: 'High Value Users/u1', value: { audience: 'High Value Users', userId: 'u1', sourceId: 'web', member: true, updatedAt: NOW, value: null } });
  });

  it('a member who leaves gets the trait false and the membership is deleted', () => {
    const { message, membership } = changeRecords({ kind: 'leave', userId: 'u3', previous: undefined }, sync, NOW, newMessageId);
    expect(message.traits).toBe('{"high_value_users":false}');
    expect(membership).toEqual({ key: 'High Value Users/u3', value: null });
  });

  it('a computed trait carries the value, and null once the user has none', () => {
    expect(changeRecords({ kind: 'join', userId: 'u1', value: '42.5' }, sync, NOW, newMessageId)).toMatchObject({
      message: { traits: '{"high_value_users":42.5}' },
      membership: { value: { value: '42.5' } },
    });
    expect(changeRecords({ kind: 'change', userId: 'u1', value: '"gold"' }, sync, NOW, newMessageId).message.traits).toBe('{"high_value_users":"gold"}');
    expect(changeRecords({ kind: 'leave', userId: 'u1', previous: '"gold"' }, sync, NOW, newMessageId).message.traits).toBe('{"high_value_users":null}');
  });

  it('gives every message its own id', () => {
    const ids = ['a', 'b', 'c'].map((userId) => changeRecords({ kind: 'join', userId, value: undefined }, sync, NOW, newMessageId).message.messageId);
    expect(new Set(ids).size).toBe(3);
  });
});
