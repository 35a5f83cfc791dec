import { describe, expect, it } from 'vitest';
import { thrown } from '@tributary/test/harness/thrown';
import type { ConfigState } from '@tributary/shared';
import { MAX_AUDIENCE_MEMBERS, planAudienceSync, snakeCase, type AudienceSyncInput } from './audience-plan.js';
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
  ])('%s → %s', (name, expected) => {
    expect(snakeCase(name)).toBe(expected);
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
const input = (overrides: Partial<AudienceSyncInput> = {}): AudienceSyncInput => ({
  name: 'High Value Users',
  body: { sourceId: 'web', userIds: ['u1', 'u2'] },
  config,
  members: new Set(),
  now: 1_700_000_000_000,
  newMessageId: () => `m-${++counter}`,
  ...overrides,
});

const refusal = (run: () => unknown): AdminError => thrown(run, AdminError);

describe('planAudienceSync', () => {
  it('sends an Identify with trait true for every member on the first sync', () => {
    const plan = planAudienceSync(input({ body: { sourceId: 'web', userIds: ['u1', 'u2', 'u1'] } }));
    expect(plan).toMatchObject({ trait: 'high_value_users', firstSync: true, added: ['u1', 'u2'], removed: [], unchanged: 0 });
    expect(plan.messages).toHaveLength(2);
    expect(plan.messages[0]).toMatchObject({
      type: 'identify',
      sourceId: 'web',
      userId: 'u1',
      anonymousId: null,
      timestamp: 1_700_000_000_000,
      receivedAt: 1_700_000_000_000,
      traits: '{"high_value_users":true}',
    });
    expect(JSON.parse(plan.messages[0]!.context!)).toEqual({
      personas: { computation_class: 'audience', computation_key: 'high_value_users', computation_name: 'High Value Users' },
    });
    expect(new Set(plan.messages.map((message) => message.messageId)).size).toBe(2);
    expect(plan.memberships).toEqual([
      { key: 'High Value Users/u1', value: { audience: 'High Value Users', userId: 'u1', sourceId: 'web', member: true, updatedAt: 1_700_000_000_000 } },
      { key: 'High Value Users/u2', value: { audience: 'High Value Users', userId: 'u2', sourceId: 'web', member: true, updatedAt: 1_700_000_000_000 } },
    ]);
  });

  it('sends only the changes on later syncs: added true, removed false', () => {
    const plan = planAudienceSync(input({ members: new Set(['u1', 'u2', 'u3']), body: { sourceId: 'web', userIds: ['u2', 'u4', 'u1'] } }));
    expect(plan).toMatchObject({ firstSync: false, added: ['u4'], removed: ['u3'], unchanged: 2 });
    expect(plan.messages.map((message) => [message.userId, message.traits])).toEqual([
      ['u4', '{"high_value_users":true}'],
      ['u3', '{"high_value_users":false}'],
    ]);
    expect(plan.memberships.map(({ key, value }) => [key, value?.member ?? null])).toEqual([
      ['High Value Users/u4', true],
      ['High Value Users/u3', null],
    ]);
  });

  it('writes nothing when the membership is the same', () => {
    const plan = planAudienceSync(input({ members: new Set(['u1', 'u2']) }));
    expect(plan).toMatchObject({ added: [], removed: [], unchanged: 2, messages: [], memberships: [] });
  });

  it('empties an audience', () => {
    const plan = planAudienceSync(input({ members: new Set(['u1']), body: { sourceId: 'web', userIds: [] } }));
    expect(plan).toMatchObject({ removed: ['u1'], unchanged: 0 });
  });

  it.each<[string, Partial<AudienceSyncInput>, number, string, Array<{ path: string; message: string }>]>([
    ['a name with "/"', { name: 'a/b' }, 400, 'invalid_request', [{ path: 'name', message: 'may not contain "/"' }]],
    ['a name without letters or digits', { name: '!!!' }, 400, 'invalid_request', [{ path: 'name', message: 'needs at least one letter or digit (its snake_case form is the trait name)' }]],
    ['a name of 201 characters', { name: 'a'.repeat(201) }, 400, 'invalid_request', [{ path: 'name', message: 'must be 1-200 characters' }]],
    ['a missing sourceId', { body: { userIds: [] } }, 400, 'invalid_request', [{ path: 'sourceId', message: 'is required' }]],
    ['missing userIds', { body: { sourceId: 'web' } }, 400, 'invalid_request', [{ path: 'userIds', message: 'is required' }]],
    ['userIds not a list', { body: { sourceId: 'web', userIds: 'u1' } }, 400, 'invalid_request', [{ path: 'userIds', message: 'must be a list of user ids' }]],
    ['an empty user id', { body: { sourceId: 'web', userIds: ['u1', ''] } }, 400, 'invalid_request', [{ path: 'userIds[1]', message: 'may not be empty' }]],
    ['a numeric user id', { body: { sourceId: 'web', userIds: [7] } }, 400, 'invalid_request', [{ path: 'userIds[0]', message: 'must be a string' }]],
    ['too many members', { body: { sourceId: 'web', userIds: Array.from({ length: MAX_AUDIENCE_MEMBERS + 1 }, (_, i) => `u${i}`) } }, 400, 'invalid_request', [{ path: 'userIds', message: 'at most 50000 members per audience' }]],
    ['an unknown field', { body: { sourceId: 'web', userIds: [], members: [] } }, 400, 'invalid_request', [{ path: '', message: 'unknown field: members' }]],
    ['an unknown source', { body: { sourceId: 'ios', userIds: [] } }, 400, 'invalid_request', [{ path: 'sourceId', message: 'unknown source "ios"' }]],
    ['a disabled source', { body: { sourceId: 'old', userIds: [] } }, 409, 'source_disabled', []],
  ])('refuses %s', (_case, overrides, status, code, issues) => {
    const error = refusal(() => planAudienceSync(input(overrides)));
    expect([error.status, error.code, error.issues]).toEqual([status, code, issues]);
  });
});
