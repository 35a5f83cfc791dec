import { describe, expect, it } from 'vitest';
import type { ConfigState } from '@tributary/shared';
import { planDeletion } from './deletion-plan.js';
import { AdminError } from './errors.js';

const config: ConfigState = {
  sources: [
    { id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true },
    { id: 'app', name: 'App', writeKey: 'wk_app_0001', enabled: true },
    { id: 'old', name: 'Old', writeKey: 'wk_old_0001', enabled: false },
  ],
  destinations: [],
};
const now = 1_700_000_000_000;
const ids = () => {
  let n = 0;
  return () => `m-${++n}`;
};

describe('planDeletion', () => {
  it('writes one delete message per enabled source by default', () => {
    const plan = planDeletion(config, { userId: 'u-42' }, now, ids());
    expect(plan.skipped).toEqual([]);
    expect(plan.messages).toEqual(
      ['app', 'web'].map((sourceId, index) => ({
        messageId: `m-${index + 1}`,
        type: 'delete',
        sourceId,
        userId: 'u-42',
        anonymousId: null,
        timestamp: now,
        originalTimestamp: null,
        sentAt: null,
        receivedAt: now,
        event: null,
        name: null,
        category: null,
        groupId: null,
        previousId: null,
        properties: null,
        traits: null,
        context: null,
        integrations: null,
      })),
    );
  });

  it('limits to the sources named, reporting disabled ones as skipped', () => {
    const plan = planDeletion(config, { userId: 'u-42', sources: ['web', 'old', 'web'] }, now, ids());
    expect(plan.messages.map((message) => message.sourceId)).toEqual(['web']);
    expect(plan.skipped).toEqual([{ sourceId: 'old', reason: 'disabled' }]);
  });

  it.each<[string, unknown, Array<{ path: string; message: string }>]>([
    ['a missing userId', {}, [{ path: 'userId', message: 'is required' }]],
    ['an empty userId', { userId: '' }, [{ path: 'userId', message: 'may not be empty' }]],
    ['a numeric userId', { userId: 42 }, [{ path: 'userId', message: 'must be a string' }]],
    // The router quarantines an id past 512: the notification would never be delivered.
    ['a userId longer than the router takes', { userId: 'u'.repeat(513) }, [{ path: 'userId', message: 'must be at most 512 characters' }]],
    ['an empty source list', { userId: 'u', sources: [] }, [{ path: 'sources', message: 'needs at least one source id; leave it out to mean every source' }]],
    ['sources not a list', { userId: 'u', sources: 'web' }, [{ path: 'sources', message: 'must be a list of source ids' }]],
    ['an unknown source', { userId: 'u', sources: ['web', 'ios'] }, [{ path: 'sources[1]', message: 'unknown source "ios"' }]],
    ['an unknown field', { userId: 'u', anonymousId: 'a' }, [{ path: '', message: 'unknown field: anonymousId' }]],
    ['a body that is not an object', 'u-42', [{ path: '', message: 'must be an object with a userId' }]],
  ])('refuses %s', (_case, body, issues) => {
    let error: unknown;
    try {
      planDeletion(config, body, now, ids());
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AdminError);
    expect([(error as AdminError).status, (error as AdminError).issues]).toEqual([400, issues]);
  });
});
