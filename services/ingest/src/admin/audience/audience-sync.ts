/**
 * One audience sync at full size, in bounded memory: the snapshot is streamed into sorted
 * runs on disk, the audience's current state is read from the compacted audiences topic
 * into sorted runs too, and the two are merged into changes. Changes are written in chunks,
 * each one Kafka transaction holding the Identify messages and the state records they
 * imply — so a sync interrupted after any chunk, repeated later, finds those users already
 * changed and sends nobody twice and loses nobody.
 *
 * The same read finds the other audiences whose names give the same trait ("VIP Clients" and
 * "vip-clients" are both `vip_clients`): while one of them has members, a sync that would give
 * the trait to members of another is refused, or receivers would see each audience flip the
 * other's trait.
 */
import type { Kafka } from 'kafkajs';
import type { AudienceMembership, IngestMessage, TopicNames } from '@tributary/schemas';
import { scanTopicMessages, type AvroCodec, type Logger, type TopicMessages } from '@tributary/shared';
import { changeRecords, snakeCase, type AudienceSync } from '../audience-plan.js';
import { AdminError } from '../errors.js';
import type { MemberLine } from './member-lines.js';
import { diffMembers, lastPerUser, type MembershipChange } from './membership-diff.js';
import { SortedRuns } from './sorted-runs.js';

/** Changes per transaction: small enough for the broker's limits, large enough to amortise a commit. */
export const CHANGES_PER_TRANSACTION = 2_000;

export interface AudienceSyncDeps {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  logger: Logger;
  /** Writes the batches in one transaction (shared with the other admin writes). */
  write(batches: TopicMessages[]): Promise<void>;
  /** Longest the read of the audiences topic may take. */
  scanTimeoutMs: number;
  groupPrefix: string;
  /**
   * Hands over every committed record of the audiences topic, tombstones included, in offset
   * order per key: the topic itself (scanTopicMessages) unless a test gives the records.
   */
  scanState?: (onRecord: (key: string | undefined, value: Buffer | null) => Promise<void>) => Promise<void>;
}

export interface AudienceSyncOutcome {
  audience: string;
  trait: string;
  firstSync: boolean;
  /** Members in the snapshot (a user listed twice counts once). */
  members: number;
  added: number;
  removed: number;
  /** Members whose computed value changed. */
  changed: number;
  unchanged: number;
  /** Identify messages written (one per added, removed or changed user). */
  messages: number;
}

// Payloads in the sorted runs: the snapshot's value JSON ('' for a plain member); the state's
// 'M' + value JSON for a member, 'T' for a deletion.
const PLAIN = '';
const DELETED = 'T';
// Payload of another audience's member in the same-trait runs: whether it is one is all that counts.
const MEMBER = 'M';

export async function runAudienceSync(
  deps: AudienceSyncDeps,
  sync: AudienceSync,
  snapshot: AsyncIterable<MemberLine>,
  now: () => number,
  newMessageId: () => string,
): Promise<AudienceSyncOutcome> {
  const wanted = new SortedRuns();
  const current = new SortedRuns();
  // Records of other audiences with the same trait, keyed `<audience>/<userId>`: normally none.
  const sameTrait = new SortedRuns();
  try {
    let listed = 0;
    for await (const member of snapshot) {
      wanted.add(member.userId, member.value ?? PLAIN);
      listed++;
    }
    await readState(deps, sync, current, sameTrait);
    // An empty snapshot gives the trait to nobody, only takes this audience's away: it stays
    // allowed, so two audiences that came to share a trait before this check can be untangled.
    if (listed > 0) await refuseTakenTrait(sync, sameTrait);

    let currentMembers = 0;
    let members = 0;
    const counts = { unchanged: 0 };
    const tally = { join: 0, leave: 0, change: 0 };
    const before = lastPerUser(current.sorted(), (payload) => (payload === DELETED ? null : payload.length > 1 ? payload.slice(1) : undefined));
    const after = lastPerUser(wanted.sorted(), (payload) => (payload === PLAIN ? undefined : payload));
    const counting = async function* <T>(source: AsyncIterable<T>, count: () => void): AsyncGenerator<T> {
      for await (const item of source) {
        count();
        yield item;
      }
    };
    let chunk: MembershipChange[] = [];
    for await (const change of diffMembers(
      counting(before, () => currentMembers++),
      counting(after, () => members++),
      counts,
    )) {
      tally[change.kind]++;
      chunk.push(change);
      if (chunk.length >= CHANGES_PER_TRANSACTION) {
        await writeChunk(deps, sync, chunk, now(), newMessageId);
        chunk = [];
      }
    }
    if (chunk.length > 0) await writeChunk(deps, sync, chunk, now(), newMessageId);
    return {
      audience: sync.audience,
      trait: sync.trait,
      firstSync: currentMembers === 0,
      members,
      added: tally.join,
      removed: tally.leave,
      changed: tally.change,
      unchanged: counts.unchanged,
      messages: tally.join + tally.leave + tally.change,
    };
  } finally {
    wanted.remove();
    current.remove();
    sameTrait.remove();
  }
}

/**
 * The audience's records on the compacted topic, deletions included, in offset order per key;
 * and those of other audiences whose names give the same trait.
 */
async function readState(deps: AudienceSyncDeps, sync: AudienceSync, into: SortedRuns, sameTrait: SortedRuns): Promise<void> {
  // Whether a name gives this trait, per audience name: a topic holds few audiences and many
  // records, so the name is not snake_cased once per record.
  const sharesTrait = new Map<string, boolean>();
  const scan =
    deps.scanState ??
    ((onRecord) =>
      scanTopicMessages(
        { kafka: deps.kafka, topic: deps.topics.audiences, groupId: `${deps.groupPrefix}-audience-scan-${process.pid}-${Date.now()}`, since: undefined, timeoutMs: deps.scanTimeoutMs },
        (_partition, message) => onRecord(message.key?.toString('utf8'), message.value),
      ));
  await scan(async (key, value) => {
    // Audience names have no "/": the first one ends the audience, whatever the user id holds.
    const slash = key === undefined ? -1 : key.indexOf('/');
    if (key === undefined || slash < 0) return;
    const audience = key.slice(0, slash);
    if (audience !== sync.audience) {
      let shares = sharesTrait.get(audience);
      if (shares === undefined) sharesTrait.set(audience, (shares = snakeCase(audience) === sync.trait));
      if (shares) sameTrait.add(key, value && (await deps.codec.decode<AudienceMembership>('audiences', value)).member ? MEMBER : DELETED);
      return;
    }
    const userId = key.slice(slash + 1);
    if (!value) {
      into.add(userId, DELETED);
      return;
    }
    const record = await deps.codec.decode<AudienceMembership>('audiences', value);
    into.add(userId, record.member ? `M${record.value ?? ''}` : DELETED);
  });
}

/** A 409 naming the audience that has members with this sync's trait, if one has. */
async function refuseTakenTrait(sync: AudienceSync, sameTrait: SortedRuns): Promise<void> {
  // In key order, so audience by audience; read to the end, which closes the run files.
  const members = new Map<string, number>();
  for await (const { userId: key } of lastPerUser(sameTrait.sorted(), (payload) => (payload === DELETED ? null : undefined))) {
    const audience = key.slice(0, key.indexOf('/'));
    members.set(audience, (members.get(audience) ?? 0) + 1);
  }
  // The first in name order, should several have members (the answer names one).
  const owner = [...members][0];
  if (!owner) return;
  const [audience, count] = owner;
  throw new AdminError(
    409,
    'trait_in_use',
    `audience "${audience}" already sets the trait "${sync.trait}" (${count} member${count === 1 ? '' : 's'}); ` +
      `"${sync.audience}" would set it too and receivers would see each audience change the other's members: ` +
      `give "${sync.audience}" a name whose trait differs (syncing "${audience}" with no members frees the trait)`,
    [],
    { trait: sync.trait, ownedBy: audience },
  );
}

async function writeChunk(deps: AudienceSyncDeps, sync: AudienceSync, changes: MembershipChange[], now: number, newMessageId: () => string): Promise<void> {
  const messages: IngestMessage[] = [];
  const memberships: Array<{ key: string; value: Buffer | null }> = [];
  for (const change of changes) {
    const { message, membership } = changeRecords(change, sync, now, newMessageId);
    messages.push(message);
    memberships.push({ key: membership.key, value: membership.value ? deps.codec.encode(deps.topics.audiences, membership.value) : null });
  }
  await deps.write([
    // Keyed like every ingest record: anonymousId, else userId (always set here). Through the
    // overflow lane: a sync is bulk by nature (up to a million members), and on the main ingest
    // topic it would queue in front of every source's live events.
    { topic: deps.topics.ingestOverflow, messages: messages.map((message) => ({ key: message.userId!, value: deps.codec.encode(deps.topics.ingestOverflow, message) })) },
    { topic: deps.topics.audiences, messages: memberships },
  ]);
}
