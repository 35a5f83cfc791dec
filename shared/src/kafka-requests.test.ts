import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { kafkaRequestsSent, noteKafkaRequest, registerKafkaRequestsMetric } from './kafka-requests.js';

describe('Kafka request counts', () => {
  it('counts by protocol API name and serves the totals at each scrape', async () => {
    const registry = new Registry();
    registerKafkaRequestsMetric(registry);
    const before = kafkaRequestsSent().get('EndTxn') ?? 0;
    noteKafkaRequest('EndTxn');
    noteKafkaRequest('EndTxn');
    noteKafkaRequest('GroupCoordinator');
    expect(kafkaRequestsSent().get('EndTxn')).toBe(before + 2);
    expect(kafkaRequestsSent().get('FindCoordinator')).toBeGreaterThanOrEqual(1);
    expect(kafkaRequestsSent().has('GroupCoordinator')).toBe(false);
    const first = await registry.getSingleMetricAsString('tributary_kafka_requests_total');
    expect(first).toContain(`tributary_kafka_requests_total{api="EndTxn"} ${before + 2}`);
    noteKafkaRequest('EndTxn');
    const second = await registry.getSingleMetricAsString('tributary_kafka_requests_total');
    expect(second).toContain(`tributary_kafka_requests_total{api="EndTxn"} ${before + 3}`);
  });
});
