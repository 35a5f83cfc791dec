import { describe, expect, it } from 'vitest';
import { transactionRates, type TransactionCounters } from './service-metrics.js';

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
