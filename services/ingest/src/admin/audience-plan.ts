/**
 * Personas audience syncs (spec section 6): the caller sends an audience's full current
 * membership; compared with the state kept on the compacted audiences topic, it becomes
 * one Identify per user whose membership changed — on the audience's first sync, one per
 * member — with the trait `<snake_case(audience name)>: true|false` (or, for a computed
 * trait, the member's value). The decisions are here; streaming and sorting in `audience/`.
 */
import { z } from 'zod';
import type { AudienceMembership, IngestMessage, Source } from '@tributary/schemas';
import { MAX_ID_LENGTH, type ConfigState } from '@tributary/shared';
import { AdminError, invalid, parseBody } from './errors.js';
import type { MembershipChange } from './audience/membership-diff.js';
import { serverMessage } from './server-message.js';

export const MAX_AUDIENCE_MEMBERS = 50_000;

/**
 * Latin letters that NFKD leaves whole, spelt in ASCII as Segment's snake_case (lodash's
 * deburr) spells them, so Latin names keep giving ASCII traits ("Straße" → `strasse`).
 * Lower-case only: they are looked up after lower-casing.
 */
const LATIN_SPELLINGS: Readonly<Record<string, string>> = {
  ß: 'ss', æ: 'ae', ø: 'o', œ: 'oe', ð: 'd', þ: 'th', đ: 'd', ħ: 'h', ı: 'i', ł: 'l', ŋ: 'n', ŧ: 't', ĸ: 'k',
};
const LATIN_SPELT = new RegExp(`[${Object.keys(LATIN_SPELLINGS).join('')}]`, 'gu');

/**
 * The trait name for an audience: words split at spaces, punctuation and camelCase humps,
 * joined lower-case with "_" ("High Value Users" → `high_value_users`, "Churn-Risk 30d" →
 * `churn_risk_30d`, "VIP Клиенты" → `vip_клиенты`). Letters and digits of every script are
 * kept — reducing names to ASCII made "VIP Клиенты" and "VIP Пользователи" one trait, and
 * "Клиенты" none. Latin letters lose their accents ("Käufer" → `kaufer`, as Segment does and
 * as traits already sent say); other scripts keep their marks ("й", "ザ"), which are part of
 * the letter. NFKD first and NFC last: a name typed composed or decomposed (or full-width)
 * gives one trait, written composed.
 */
export function snakeCase(name: string): string {
  return (
    name
      .normalize('NFKD')
      // A mark on a Latin letter is an accent to drop; one on no letter at all has nothing to
      // belong to. (Looking behind at marks too keeps a second mark on "й"-like letters.)
      .replace(/(?<![\p{L}\p{M}])\p{M}+|(?<=\p{Script=Latin})\p{M}+/gu, '')
      .replace(/([\p{Ll}\p{N}]\p{M}*)(\p{Lu})/gu, '$1_$2')
      .replace(/((?:\p{Lu}\p{M}*)+)(\p{Lu}\p{M}*\p{Ll})/gu, '$1_$2')
      .replace(/[^\p{L}\p{M}\p{N}]+/gu, '_')
      .replace(/^_+|_+$/g, '')
      .toLowerCase()
      .replace(LATIN_SPELT, (letter) => LATIN_SPELLINGS[letter] ?? letter)
      .normalize('NFC')
  );
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
  // The router's limit for any id: a longer member was recorded as such here, and its Identify
  // quarantined there — lost for good, every later sync seeing the member as unchanged.
  .max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`);

export const audienceSyncRequest = z
  .object(
    {
      sourceId: z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') }),
      userIds: z
        .array(userId, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be a list of user ids') })
        .max(MAX_AUDIENCE_MEMBERS, `at most ${MAX_AUDIENCE_MEMBERS} members in a JSON snapshot; send larger audiences as application/x-ndjson`),
    },
    { error: 'must be an object with sourceId and userIds' },
  )
  .strict();

export function audienceKey(audience: string, user: string): string {
  return `${audience}/${user}`;
}

/** What every record of one sync shares. */
export interface AudienceSync {
  audience: string;
  trait: string;
  source: Source;
}

/** Checks the audience name and the source the Identify messages are attributed to. */
export function planAudienceSync(name: string, sourceId: string | undefined, config: ConfigState): AudienceSync {
  const audience = checkAudienceName(name);
  if (sourceId === undefined || sourceId === '') throw invalid('audience sync', [{ path: 'sourceId', message: 'is required' }]);
  const source = config.sources.find((candidate) => candidate.id === sourceId);
  if (!source) throw invalid('audience sync', [{ path: 'sourceId', message: `unknown source "${sourceId}"` }]);
  if (!source.enabled) throw new AdminError(409, 'source_disabled', `source "${source.id}" is disabled; enable it or attribute the audience to another source`);
  return { audience, trait: snakeCase(audience), source };
}

/** A JSON snapshot: `{"sourceId": …, "userIds": [...]}`, up to MAX_AUDIENCE_MEMBERS (NDJSON has no limit). */
export function parseJsonSnapshot(body: unknown): { sourceId: string; userIds: string[] } {
  return parseBody(audienceSyncRequest, body, 'audience sync');
}

/** The Identify that tells destinations about one change, and the audience state it leaves. */
export function changeRecords(
  change: MembershipChange,
  { audience, trait, source }: AudienceSync,
  now: number,
  newMessageId: () => string,
): { message: IngestMessage; membership: { key: string; value: AudienceMembership | null } } {
  // A plain audience's trait is true/false; a computed trait carries its value, and null once
  // the user no longer has one.
  const traitValue: unknown = change.kind === 'leave' ? (change.previous === undefined ? false : null) : change.value === undefined ? true : (JSON.parse(change.value) as unknown);
  const message = serverMessage(
    {
      messageId: newMessageId(),
      type: 'identify',
      sourceId: source.id,
      userId: change.userId,
      traits: JSON.stringify({ [trait]: traitValue }),
      context: JSON.stringify({ personas: { computation_class: 'audience', computation_key: trait, computation_name: audience } }),
    },
    now,
  );
  const key = audienceKey(audience, change.userId);
  // A member who left is deleted rather than kept as member=false, so the audiences topic
  // stays bounded by the current members; absent means not a member.
  const value: AudienceMembership | null =
    change.kind === 'leave' ? null : { audience, userId: change.userId, sourceId: source.id, member: true, updatedAt: now, value: change.value ?? null };
  return { message, membership: { key, value } };
}
