/**
 * One audience sync at full size, in bounded memory: the snapshot is streamed into sorted
 * runs on disk, the audience's current state is read from the compacted audiences topic
 * into sorted runs too, and the two are merged into changes. Changes are written in chunks,
 * each one Kafka transaction holding the Identify messages and the state records they
 * imply — so a sync interrupted after any chunk, repeated later, finds those users already
 * changed and sends nobody twice and loses nobody.
 */
import type { Kafka } from 'kafkajs';
import type { AudienceMembership, IngestMessage, TopicNames } from '@tributary/schemas';
import { scanTopicMessages, type AvroCodec, type Logger, type TopicMessages } from '@tributary/shared';
import { changeRecords, type AudienceSync } from '../audience-plan.js';
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

export async function runAudienceSync(
  deps: AudienceSyncDeps,
  sync: AudienceSync,
  snapshot: AsyncIterable<MemberLine>,
  now: () => number,
  newMessageId: () => string,
): Promise<AudienceSyncOutcome> {
  const wanted = new SortedRuns();
  const current = new SortedRuns();
  try {
    for await (const member of snapshot) wanted.add(member.userId, member.value ?? PLAIN);
    await readState(deps, sync.audience, current);

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
  }
}

/** The audience's records on the compacted topic, deletions included, in offset order per key. */
async function readState(deps: AudienceSyncDeps, audience: string, into: SortedRuns): Promise<void> {
  const prefix = `${audience}/`;
  await scanTopicMessages(
    { kafka: deps.kafka, topic: deps.topics.audiences, groupId: `${deps.groupPrefix}-audience-scan-${process.pid}-${Date.now()}`, since: undefined, timeoutMs: deps.scanTimeoutMs },
    async (_partition, message) => {
      const key = message.key?.toString('utf8');
      if (!key?.startsWith(prefix)) return;
      const userId = key.slice(prefix.length);
      if (!message.value) {
        into.add(userId, DELETED);
        return;
      }
      const record = await deps.codec.decode<AudienceMembership>('audiences', message.value);
      into.add(userId, record.member ? `M${record.value ?? ''}` : DELETED);
    },
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
