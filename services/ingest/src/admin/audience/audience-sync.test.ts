import { describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { topicNames, type AudienceMembership } from '@tributary/schemas';
import { createLogger, type AvroCodec, type ConfigState, type TopicMessages } from '@tributary/shared';
import { planAudienceSync } from '../audience-plan.js';
import { AdminError } from '../errors.js';
import { runAudienceSync } from './audience-sync.js';
import type { MemberLine } from './member-lines.js';

const topics = topicNames('test');
// JSON stands in for Avro: the sync only needs its records back as they were written.
const codec = {
  encode: (_topic: string, value: unknown) => Buffer.from(JSON.stringify(value)),
  decode: <T>(_name: string, buffer: Buffer | null) => Promise.resolve(JSON.parse(buffer!.toString('utf8')) as T),
} as unknown as AvroCodec;
const config: ConfigState = { sources: [{ id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true }], destinations: [] };

type StateRecord = [key: string, value: AudienceMembership | null];
const member = (audience: string, userId: string): StateRecord => [`${audience}/${userId}`, { audience, userId, sourceId: 'web', member: true, updatedAt: 1, value: null }];
const left = (audience: string, userId: string): StateRecord => [`${audience}/${userId}`, null];

/** One sync against the audiences topic holding `state`; what it wrote, or the error it threw. */
async function sync(name: string, userIds: string[], state: StateRecord[]) {
  const written: TopicMessages[] = [];
  let counter = 0;
  const snapshot = (async function* (): AsyncGenerator<MemberLine> {
    for (const userId of userIds) yield { userId, value: undefined };
  })();
  const run = runAudienceSync(
    {
      kafka: {} as Kafka,
      codec,
      topics,
      logger: createLogger({ service: 'test', level: 'silent' }),
      write: (batches) => {
        written.push(...batches);
        return Promise.resolve();
      },
      scanTimeoutMs: 1_000,
      groupPrefix: 'test',
      scanState: async (onRecord) => {
        for (const [key, value] of state) await onRecord(key, value && codec.encode(topics.audiences, value));
      },
    },
    planAudienceSync(name, 'web', config),
    snapshot,
    () => 1_000,
    () => `m-${++counter}`,
  );
  return run.then(
    (outcome) => ({ outcome, written, error: undefined }),
    (error: unknown) => ({ outcome: undefined, written, error }),
  );
}

describe('runAudienceSync and the trait other audiences set', () => {
  it('refuses, naming it, a sync whose trait an audience with members already sets; nothing is written', async () => {
    const { error, written } = await sync('vip-clients', ['u9'], [member('VIP Clients', 'u1'), member('VIP Clients', 'u2'), member('Other', 'u3')]);
    expect(error).toBeInstanceOf(AdminError);
    const refusal = error as AdminError;
    expect([refusal.status, refusal.code]).toEqual([409, 'trait_in_use']);
    expect(refusal.body()).toMatchObject({ trait: 'vip_clients', ownedBy: 'VIP Clients' });
    expect(refusal.message).toMatch(/^audience "VIP Clients" already sets the trait "vip_clients" \(2 members\); "vip-clients" would set it too/);
    expect(written).toEqual([]);
  });

  it('counts composed and decomposed spellings of a name as one trait', async () => {
    const { error } = await sync('Cafe\u0301 Fans', ['u9'], [member('Café Fans', 'u1')]);
    expect(error).toMatchObject({ status: 409, code: 'trait_in_use' });
  });

  it('lets a sync through once the other audience has no members left, or when the names give different traits', async () => {
    const emptied = await sync('vip-clients', ['u9'], [member('VIP Clients', 'u1'), left('VIP Clients', 'u1')]);
    expect(emptied.error).toBeUndefined();
    expect(emptied.outcome).toMatchObject({ trait: 'vip_clients', added: 1, messages: 1 });
    // Before Unicode letters were kept, both of these were the trait `vip`.
    const distinct = await sync('VIP Пользователи', ['u9'], [member('VIP Клиенты', 'u1')]);
    expect(distinct.outcome).toMatchObject({ trait: 'vip_пользователи', added: 1 });
  });

  it('lets an empty snapshot through, so one of two audiences that already share a trait can be emptied', async () => {
    const { error, outcome } = await sync('vip-clients', [], [member('VIP Clients', 'u1'), member('vip-clients', 'u2')]);
    expect(error).toBeUndefined();
    expect(outcome).toMatchObject({ removed: 1, messages: 1 });
  });

  it('still diffs against its own records only', async () => {
    const { outcome, written } = await sync('VIP Clients', ['u1', 'u3'], [member('VIP Clients', 'u1'), member('VIP Clients', 'u2'), member('VIP', 'u1')]);
    expect(outcome).toMatchObject({ firstSync: false, members: 2, added: 1, removed: 1, unchanged: 1, messages: 2 });
    expect(written.find((batch) => batch.topic === topics.audiences)?.messages.map((message) => message.key)).toEqual(['VIP Clients/u2', 'VIP Clients/u3']);
  });
});
