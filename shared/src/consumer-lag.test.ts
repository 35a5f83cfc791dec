import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ConsumerLagProbe } from './consumer-lag.js';
import { createLogger } from './logger.js';

describe('ConsumerLagProbe', () => {
  it('starts while the broker is away, without throwing, and measures nothing until it answers', async () => {
    // Nothing listens on port 1: the connection is refused at once.
    const kafka = new Kafka({ clientId: 'lag-probe-test', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 500 });
    const probe = new ConsumerLagProbe({ kafka, logger: createLogger({ service: 'test', level: 'silent' }), groups: [{ groupId: 'g', topic: 't' }] });
    await expect(probe.start()).resolves.toBeUndefined();
    await expect(probe.measure()).resolves.toEqual([]);
    await probe.stop();
  });
});
