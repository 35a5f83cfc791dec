import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { planRetention } from './dedup-retention.js';

const { ConfigSource } = kafkajs;
const HOUR = 3_600_000;

const entry = (configName: string, configValue: string, configSource = ConfigSource.TOPIC_CONFIG) => ({ configName, configValue, configSource });

describe('planRetention', () => {
  it('raises a retention shorter than the window, keeping the topic\'s own settings and no broker defaults', () => {
    const plan = planRetention(
      [
        entry('cleanup.policy', 'delete'),
        entry('retention.ms', String(24 * HOUR)),
        entry('segment.ms', '3600000'),
        entry('max.message.bytes', '1048588', ConfigSource.DEFAULT_CONFIG),
        entry('retention.bytes', '-1', ConfigSource.STATIC_BROKER_CONFIG),
      ],
      48 * HOUR,
    );
    expect(plan).toEqual({
      fromMs: 24 * HOUR,
      topicConfig: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'segment.ms', value: '3600000' },
        { name: 'retention.ms', value: String(48 * HOUR) },
      ],
    });
  });

  it('raises a retention the topic inherits from the broker', () => {
    expect(planRetention([entry('retention.ms', String(168 * HOUR), ConfigSource.DEFAULT_CONFIG)], 200 * HOUR)?.topicConfig).toEqual([
      { name: 'retention.ms', value: String(200 * HOUR) },
    ]);
  });

  it('leaves a retention that covers the window, an unlimited one, and one it cannot read', () => {
    expect(planRetention([entry('retention.ms', String(24 * HOUR))], 24 * HOUR)).toBeUndefined();
    expect(planRetention([entry('retention.ms', String(48 * HOUR))], 24 * HOUR)).toBeUndefined();
    expect(planRetention([entry('retention.ms', '-1')], 24 * HOUR)).toBeUndefined();
    expect(planRetention([], 24 * HOUR)).toBeUndefined();
  });
});
