import type { Message, Transaction } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { chunkMessages, groupByTopic, MAX_PRODUCE_REQUEST_BYTES, sendInChunks, type TopicMessages } from './transactions.js';

const message = (label: string, bytes: number): Message => ({ key: Buffer.from(label), value: Buffer.alloc(Math.max(0, bytes - label.length)) });
const labels = (chunks: Message[][]) => chunks.map((chunk) => chunk.map((m) => String(m.key)));

describe('chunkMessages', () => {
  it('keeps messages in order in runs of at most maxBytes', () => {
    const messages = [message('a', 40), message('b', 40), message('c', 20), message('d', 50), message('e', 10)];
    expect(labels(chunkMessages(messages, 100))).toEqual([['a', 'b', 'c'], ['d', 'e']]);
  });

  it('sends a message larger than maxBytes alone', () => {
    expect(labels(chunkMessages([message('a', 10), message('big', 500), message('b', 10)], 100))).toEqual([['a'], ['big'], ['b']]);
  });

  it('counts null values as empty, and makes no chunk of nothing', () => {
    expect(chunkMessages([{ key: 'k', value: null }, { key: 'k', value: null }], 2)).toHaveLength(1);
    expect(chunkMessages([], 100)).toEqual([]);
  });
});

describe('sendInChunks', () => {
  /** Records what would go out in each produce request. */
  const recorder = () => {
    const requests: TopicMessages[][] = [];
    const transaction = {
      sendBatch: async ({ topicMessages }: { topicMessages: TopicMessages[] }) => {
        requests.push(topicMessages.map(({ topic, messages }) => ({ topic, messages: [...messages] })));
        return [];
      },
    } as unknown as Transaction;
    return { requests, transaction };
  };

  it('puts small writes to several topics into one request', async () => {
    const { requests, transaction } = recorder();
    await sendInChunks(transaction, [
      { topic: 'deliveries', messages: [message('d1', 100), message('d2', 100)] },
      { topic: 'dedup', messages: [message('x1', 10)] },
    ]);
    expect(requests.map((request) => request.map(({ topic, messages }) => `${topic}:${messages.length}`))).toEqual([['deliveries:2', 'dedup:1']]);
  });

  it('splits a large write so no request exceeds the limit, keeping order', async () => {
    const { requests, transaction } = recorder();
    const big = Array.from({ length: 5 }, (_, index) => message(`m${index}`, 300_000));
    await sendInChunks(transaction, [{ topic: 'deliveries', messages: big }]);
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      const bytes = request.flatMap(({ messages }) => messages).reduce((sum, m) => sum + (m.key?.length ?? 0) + (m.value?.length ?? 0), 0);
      expect(bytes).toBeLessThanOrEqual(MAX_PRODUCE_REQUEST_BYTES);
    }
    expect(requests.flatMap((request) => request.flatMap(({ messages }) => messages.map((m) => String(m.key))))).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('sends nothing for nothing', async () => {
    const { requests, transaction } = recorder();
    await sendInChunks(transaction, [{ topic: 't', messages: [] }]);
    expect(requests).toEqual([]);
  });
});

describe('groupByTopic', () => {
  it('makes one batch per topic, in first-seen order, keeping each topic’s records in order', () => {
    const a1 = { topic: 'a', key: '1', value: Buffer.from('x') };
    const b1 = { topic: 'b', key: '2', value: null };
    const a2 = { topic: 'a', key: '3', value: Buffer.from('y') };
    expect(groupByTopic([a1, b1, a2])).toEqual([
      { topic: 'a', messages: [{ key: '1', value: a1.value }, { key: '3', value: a2.value }] },
      { topic: 'b', messages: [{ key: '2', value: null }] },
    ]);
    expect(groupByTopic([])).toEqual([]);
  });
});
