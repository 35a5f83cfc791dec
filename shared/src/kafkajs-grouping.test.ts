import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupMessagesPerPartition, type GroupingArgs } from './kafkajs-grouping.js';

const require = createRequire(import.meta.url);

/** kafkajs's own function, read from its file again whatever the module cache holds. */
function kafkajsGrouping(): (args: GroupingArgs<unknown>) => Record<number, unknown[]> {
  const path = require.resolve('kafkajs/src/producer/groupMessagesPerPartition.js');
  const cached = require.cache[path];
  delete require.cache[path];
  try {
    return require(path) as (args: GroupingArgs<unknown>) => Record<number, unknown[]>;
  } finally {
    if (cached) require.cache[path] = cached;
  }
}

describe("kafkajs's grouping of messages by partition, in one pass", () => {
  it('groups as kafkajs does: the same partitions, each with its messages in the order given', () => {
    const original = kafkajsGrouping();
    expect(original).not.toBe(groupMessagesPerPartition);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 11 }), { maxLength: 300 }), fc.integer({ min: 0, max: 12 }), (partitions, partitionCount) => {
        const messages = partitions.map((partition, index) => ({ key: `k${index}`, partition }));
        const args = {
          topic: 't',
          partitionMetadata: Array.from({ length: partitionCount }, (_, partitionId) => ({ partitionId })),
          messages,
          partitioner: ({ message }: { message: unknown }) => (message as { partition: number }).partition,
        };
        expect(groupMessagesPerPartition(args)).toEqual(original(args));
      }),
    );
  });

  it('is what kafkajs uses in a process that loads it through @tributary/shared', () => {
    // A process of its own: in this one, vitest may have loaded kafkajs before the fix could.
    const shared = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
      const { messageGroupingFixed } = await import(${JSON.stringify(shared)});
      const { createRequire } = await import('node:module');
      const require = createRequire(${JSON.stringify(shared)});
      const grouping = require.cache[require.resolve('kafkajs/src/producer/groupMessagesPerPartition.js')]?.exports;
      const sendLoaded = Boolean(require.cache[require.resolve('kafkajs/src/producer/sendMessages.js')]);
      console.log(JSON.stringify({ fixed: messageGroupingFixed(), name: grouping?.name, sendLoaded }));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual({ fixed: true, name: 'groupMessagesPerPartition', sendLoaded: true });
  });
});
