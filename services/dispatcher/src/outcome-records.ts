/**
 * The records a settled delivery writes, encoded: its retry record or dead letter, its
 * delivery-log record, and whatever else the outcome brings (a config change). A record the
 * broker would refuse for its size would wedge every transaction after it: the delivery goes
 * to the quarantine instead, as `too_large`. Pure apart from the Avro encoding.
 */
import { isDeepStrictEqual } from 'node:util';
import { configKey, quarantineMessage, RECORD_FRAMING_BYTES, type AvroCodec, type PoisonRecord, type QuarantineCause } from '@tributary/shared';
import type { Destination, TopicNames } from '@tributary/schemas';
import { attemptRecord, type AttemptFacts, type TargetReport } from './attempt-log.js';
import { outputBytes, type Output } from './ledger.js';
import type { Settlement } from './next-step.js';

/** What encodes a value for a topic (an AvroCodec). */
export type Encoder = Pick<AvroCodec, 'encode'>;


export type SettledResult = 'delivered' | 'retry' | 'dead' | 'deferred';

export interface OutcomeRecords {
  outputs: Output[];
  result: SettledResult;
  /** The outcome was too large to write and the delivery was quarantined instead. */
  tooLarge: boolean;
  /** The outcome could not be encoded and the delivery was quarantined instead. */
  unencodable?: true;
}

export interface Origin {
  topic: string;
  partition: number;
  offset: bigint;
  readAt: number;
}

/**
 * The records a settled delivery writes; a delivery whose outcome cannot be written — too
 * large for the broker, or a value its schema cannot hold — is quarantined instead, so that it
 * neither wedges the transactions after it nor, read again after a restart, stops the service
 * at every read.
 */
export function outcomeRecords(codec: Encoder, topics: TopicNames, maxRecordBytes: number, facts: AttemptFacts, origin: Origin, extra: Output[] = []): OutcomeRecords {
  try {
    return encodedOutcome(codec, topics, maxRecordBytes, facts, origin, extra);
  } catch (error) {
    const cause = { reason: 'unencodable', error: `the outcome of this delivery could not be encoded: ${error instanceof Error ? error.message : String(error)}` } as const;
    return { outputs: [quarantineOutput(codec, topics, poisonOf(codec, topics, facts, origin), cause, Date.now())], result: 'dead', tooLarge: false, unencodable: true };
  }
}

function poisonOf(codec: Encoder, topics: TopicNames, { delivery }: AttemptFacts, origin: Origin): PoisonRecord {
  return {
    topic: origin.topic,
    partition: origin.partition,
    offset: origin.offset.toString(),
    key: Buffer.from(delivery.deliveryId),
    value: codec.encode(topics.deliveries, delivery),
    timestamp: String(origin.readAt),
  };
}

function encodedOutcome(codec: Encoder, topics: TopicNames, maxRecordBytes: number, facts: AttemptFacts, origin: Origin, extra: Output[]): OutcomeRecords {
  const { settlement, delivery } = facts;
  const key = delivery.deliveryId;
  const outputs: Output[] = [];
  if (settlement.kind === 'retry') {
    const topic = topics.retry(settlement.record.tier);
    outputs.push({ topic, key, value: codec.encode(topic, settlement.record) });
  } else if (settlement.kind === 'dead') {
    outputs.push({ topic: topics.deadLetters, key, value: codec.encode(topics.deadLetters, settlement.letter) });
  }
  const limit = maxRecordBytes - RECORD_FRAMING_BYTES;
  if (outputs.some((output) => outputBytes(output) > limit)) {
    const poison = poisonOf(codec, topics, facts, origin);
    const cause = { reason: 'too_large', error: `the outcome record of this delivery would exceed ${limit} bytes (KAFKA_MAX_RECORD_BYTES); the delivery was set aside` } as const;
    return { outputs: [quarantineOutput(codec, topics, poison, cause, Date.now())], result: 'dead', tooLarge: true };
  }
  // Every attempt and every end goes to the delivery log; a deferral that only moves the
  // delivery up the ladder does not (it is counted, and logged per destination): an open
  // circuit defers each waiting delivery several times, and the log would grow with it.
  if (facts.kind !== 'deferred' || settlement.kind === 'dead') outputs.push({ topic: topics.attempts, key, value: codec.encode(topics.attempts, attemptRecord(facts)) });
  outputs.push(...extra);
  const result: SettledResult = facts.kind === 'deferred' && settlement.kind === 'retry' ? 'deferred' : settlement.kind;
  return { outputs, result, tooLarge: false };
}

export function quarantineOutput(codec: Encoder, topics: TopicNames, poison: PoisonRecord, cause: QuarantineCause, now: number): Output {
  const { topic, message } = quarantineMessage(codec, topics, 'dispatcher', poison, cause, now);
  return { topic, key: String(message.key), value: message.value as Buffer };
}

/**
 * What DELIVERY_DISABLE_ON_GONE does with a settled delivery: `disable` its destination when
 * every URL answered 410 Gone (one path of a receiver, or a proxy before it, answering 410 says
 * nothing of the others). The disabling record is a copy of the destination `attempted` (as
 * configured when the attempt began): when the destination `current`ly configured differs —
 * edited (new URLs, say), disabled or deleted by an admin while the attempt ran — that copy
 * would undo the edit or bring the destination back, so it is `config_changed` and nothing is
 * written.
 */
export function onGone(settlement: Settlement, targets: readonly TargetReport[], attempted: Destination | undefined, current: Destination | undefined): 'none' | 'disable' | 'config_changed' {
  if (settlement.kind !== 'dead' || settlement.letter.reason !== 'gone' || !attempted?.enabled) return 'none';
  const everyGone = targets.length > 0 && targets.every(({ verdict }) => verdict.class === 'fatal' && verdict.reason === 'gone');
  if (!everyGone) return 'none';
  return isDeepStrictEqual(attempted, current) ? 'disable' : 'config_changed';
}

/** The config record that disables a destination whose every URL answered 410 Gone. */
export function disablingRecord(codec: Encoder, topics: TopicNames, destination: Destination, now: number): Output {
  return { topic: topics.config, key: configKey('destination', destination.id), value: codec.encode(topics.config, { entity: { ...destination, enabled: false }, updatedAt: now }) };
}
