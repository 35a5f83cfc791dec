import { describe, expect, it } from 'vitest';
import { kafkaRequestRates, parseKafkaRequests, transactionRates, type TransactionCounters } from './service-metrics.js';

const zero: TransactionCounters = { ingestTransactions: 0, ingestRecords: 0, ingestSeconds: 0, routerTransactions: 0, routerSeconds: 0, routerDeliveries: 0 };

describe('transactionRates', () => {
  it('turns two readings into transactions per second and their mean size and duration', () => {
    const end: TransactionCounters = { ingestTransactions: 20, ingestRecords: 3000, ingestSeconds: 0.4, routerTransactions: 100, routerSeconds: 1.5, routerDeliveries: 5000 };
    expect(transactionRates(zero, end, 10)).toEqual({
      ingest: { perSecond: 2, meanRecords: 150, meanMs: 20 },
      router: { perSecond: 10, meanDeliveries: 50, meanMs: 15 },
    });
  });
});

describe('Kafka request rates', () => {
  it('reads the counter by API from a /metrics text', () => {
    const text = [
      '# HELP tributary_kafka_requests_total Requests sent to Kafka',
      '# TYPE tributary_kafka_requests_total counter',
      'tributary_kafka_requests_total{api="Produce",service="ingest"} 30',
      'tributary_kafka_requests_total{service="ingest",api="EndTxn"} 10',
      'tributary_kafka_requests_totally{api="Produce"} 99',
    ].join('\n');
    expect(parseKafkaRequests(text)).toEqual({ Produce: 30, EndTxn: 10 });
  });

  it('turns two readings into requests per second and per 1,000 delivered events, by service and by API', () => {
    const from = { ingest: { Produce: 10, EndTxn: 5 }, router: { Fetch: 4 } };
    const to = { ingest: { Produce: 30, EndTxn: 15, FindCoordinator: 2 }, router: { Fetch: 24 } };
    const rates = kafkaRequestRates(from, to, 10, 2_000);
    expect(rates.perSecond).toBe(5.2);
    expect(rates.per1kEvents).toBe(26);
    expect(rates.byService.ingest).toEqual({ perSecond: 3.2, per1kEvents: 16 });
    expect(rates.byService.router).toEqual({ perSecond: 2, per1kEvents: 10 });
    expect(rates.byApi).toEqual({ Produce: 2, EndTxn: 1, FindCoordinator: 0.2, Fetch: 2 });
  });
});
