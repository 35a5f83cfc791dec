/**
 * Personas audience syncs (spec section 6): the caller sends an audience's full current
 * membership; compared with the state kept on the compacted audiences topic, it becomes
 * one Identify per user whose membership changed — on the audience's first sync, one per
 * member — with the trait `<snake_case(audience name)>: true|false`.
 */
import { z } from 'zod';
import type { AudienceMembership, IngestMessage } from '@tributary/schemas';
import type { ConfigState } from '@tributary/shared';
import { AdminError, invalid, parseBody } from './errors.js';
import { serverMessage } from './server-message.js';

export const MAX_AUDIENCE_MEMBERS = 50_000;

/**
 * The trait name for an audience: words split at spaces, punctuation and camelCase
 * humps, accents dropped, joined lower-case with "_" ("High Value Users" →
 * `high_value_users`, "Churn-Risk 30d" → `churn_risk_30d`).
 */
export function snakeCase(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
}

/** The audience name from the URL; it is part of the state key `<audience>/<userId>`, so no "/". */
export function checkAudienceName(name: string): string {
  const problem =
    name.length === 0 || name.length > 200
      ? 'must be 1-200 characters'
      : name.includes('/')
        ? 'may not contain "/"'
        : snakeCase(name) === ''
          ? 'needs at least one letter or digit (its snake_case form is the trait name)'
          : undefined;
  if (problem) throw invalid('audience name', [{ path: 'name', message: problem }]);
  return name;
}

const userId = z
  .string({ error: 'must be a string' })
  .min(1, 'may not be empty')
  .max(1024, 'must be at most 1024 characters');

export const audienceSyncRequest = z
  .object(
    {
      sourceId: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') }),
      userIds: z
        .array(userId, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be a list of user ids') })
        .max(MAX_AUDIENCE_MEMBERS, `at most ${MAX_AUDIENCE_MEMBERS} members per audience`),
    },
    { error: 'must be an object with sourceId and userIds' },
  )
  .strict();

export function audienceKey(audience: string, user: string): string {
  return `${audience}/${user}`;
}

export interface AudienceSyncPlan {
  trait: string;
  firstSync: boolean;
  added: string[];
  removed: string[];
  unchanged: number;
  /** Identify messages for the ingest topic. */
  messages: IngestMessage[];
  /** New state for the audiences topic; null removes a user's membership. */
  memberships: Array<{ key: string; value: AudienceMembership | null }>;
}

export interface AudienceSyncInput {
  name: string;
  body: unknown;
  config: ConfigState;
  /** Current members of the audience; empty when it was never synced. */
  members: ReadonlySet<string>;
  now: number;
  newMessageId: () => string;
}

export function planAudienceSync({ name, body, config, members, now, newMessageId }: AudienceSyncInput): AudienceSyncPlan {
  const audience = checkAudienceName(name);
  const request = parseBody(audienceSyncRequest, body, 'audience sync');
  const source = config.sources.find((candidate) => candidate.id === request.sourceId);
  if (!source) throw invalid('audience sync', [{ path: 'sourceId', message: `unknown source "${request.sourceId}"` }]);
  if (!source.enabled) throw new AdminError(409, 'source_disabled', `source "${source.id}" is disabled; enable it or attribute the audience to another source`);

  const trait = snakeCase(audience);
  const wanted = [...new Set(request.userIds)];
  const wantedSet = new Set(wanted);
  const added = wanted.filter((user) => !members.has(user));
  const removed = [...members].filter((user) => !wantedSet.has(user)).sort();
  const identify = (user: string, member: boolean): IngestMessage =>
    serverMessage(
      {
        messageId: newMessageId(),
        type: 'identify',
        sourceId: source.id,
        userId: user,
        traits: JSON.stringify({ [trait]: member }),
        context: JSON.stringify({ personas: { computation_class: 'audience', computation_key: trait, computation_name: audience } }),
      },
      now,
    );
  return {
    trait,
    firstSync: members.size === 0,
    added,
    removed,
    unchanged: wanted.length - added.length,
    messages: [...added.map((user) => identify(user, true)), ...removed.map((user) => identify(user, false))],
    memberships: [
      ...added.map((user) => ({ key: audienceKey(audience, user), value: { audience, userId: user, sourceId: source.id, member: true, updatedAt: now } })),
      // A removed member's record is deleted rather than kept as member=false, so the
      // audiences topic stays bounded by the current members; absent means not a member.
      ...removed.map((user) => ({ key: audienceKey(audience, user), value: null })),
    ],
  };
}
