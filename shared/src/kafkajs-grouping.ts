/**
 * One more fix to kafkajs 2.2.4 (see kafkajs-fixes.ts for the others), which has to be made
 * before kafkajs is loaded rather than after: kafka.ts imports this module ahead of kafkajs.
 *
 * Every send groups its messages by partition in `producer/groupMessagesPerPartition.js`,
 * a `reduce` that copies the partition's array for each message (`[...current, message]`):
 * quadratic in the messages a send has per partition, and an array of garbage per message.
 * A produce request here carries up to MAX_PRODUCE_REQUEST_BYTES (800 KB: a few thousand
 * small records): the router moving a 100,000-record backfill to its overflow lane spent 1.15 s
 * of its main thread in that function alone (CPU profile of test/e2e/direct-backfill), beside
 * 2.3 s of garbage collection. The replacement below groups in one pass, in the same order.
 *
 * `sendMessages.js` captures the function when it is first required, which kafkajs does as
 * it loads; so the replacement is put in the module cache before that, as the CRC-32C fix is.
 * If kafkajs was loaded first, its own function stays in use (`messageGroupingFixed()` false,
 * logged by createKafka).
 */
import { createRequire } from 'node:module';
// Loads none of kafkajs itself: its fixes require kafkajs's modules only when applied.
import { FIXED_KAFKAJS_VERSION } from './kafkajs-fixes.js';

interface PartitionerArgs {
  topic: string;
  partitionMetadata: unknown[];
  message: unknown;
}

export interface GroupingArgs<M> {
  topic: string;
  partitionMetadata: unknown[];
  messages: M[];
  partitioner: (args: PartitionerArgs) => number;
}

/** kafkajs's contract: messages by partition, each partition's in the order given; `{}` without metadata. */
export function groupMessagesPerPartition<M>({ topic, partitionMetadata, messages, partitioner }: GroupingArgs<M>): Record<number, M[]> {
  const grouped: Record<number, M[]> = {};
  if (partitionMetadata.length === 0) return grouped;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    (grouped[partition] ??= []).push(message);
  }
  return grouped;
}

const require = createRequire(import.meta.url);
const GROUPING_MODULE = 'kafkajs/src/producer/groupMessagesPerPartition.js';
const SEND_MODULE = 'kafkajs/src/producer/sendMessages.js';

function fixGrouping(): boolean {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  if (require.cache[require.resolve(SEND_MODULE)]) return false;
  require(GROUPING_MODULE);
  const cached = require.cache[require.resolve(GROUPING_MODULE)];
  if (!cached) return false;
  cached.exports = groupMessagesPerPartition;
  return true;
}

const groupingFixed = fixGrouping();

/** Whether kafkajs's producers group messages with the function above. */
export const messageGroupingFixed = (): boolean => groupingFixed;
