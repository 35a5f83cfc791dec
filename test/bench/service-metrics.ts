/**
 * The services' own counters, read from their /metrics at a phase's start and end: how many
 * Kafka transactions ingest and the router committed and how large they were — the figures
 * that explain the broker's share of the CPU.
 */
import { metricValue } from '../harness/metrics.js';

export interface TransactionCounters {
  ingestTransactions: number;
  ingestRecords: number;
  ingestSeconds: number;
  routerTransactions: number;
  routerSeconds: number;
  routerDeliveries: number;
}

export async function readTransactionCounters(ingestUrl: string, routerUrl: string): Promise<TransactionCounters> {
  const [ingestTransactions, ingestRecords, ingestSeconds, routerTransactions, routerSeconds, routerDeliveries] = await Promise.all([
    metricValue(ingestUrl, 'tributary_ingest_transaction_size_count'),
    metricValue(ingestUrl, 'tributary_ingest_transaction_size_sum'),
    metricValue(ingestUrl, 'tributary_ingest_produce_duration_seconds_sum'),
    metricValue(routerUrl, 'tributary_router_transaction_duration_seconds_count'),
    metricValue(routerUrl, 'tributary_router_transaction_duration_seconds_sum'),
    metricValue(routerUrl, 'tributary_router_routed_total'),
  ]);
  return { ingestTransactions, ingestRecords, ingestSeconds, routerTransactions, routerSeconds, routerDeliveries };
}

export interface TransactionRates {
  ingest: { perSecond: number; meanRecords: number; meanMs: number };
  router: { perSecond: number; meanDeliveries: number; meanMs: number };
}

export function transactionRates(from: TransactionCounters, to: TransactionCounters, seconds: number): TransactionRates {
  const ingest = to.ingestTransactions - from.ingestTransactions;
  const router = to.routerTransactions - from.routerTransactions;
  return {
    ingest: {
      perSecond: ingest / seconds,
      meanRecords: (to.ingestRecords - from.ingestRecords) / ingest,
      meanMs: ((to.ingestSeconds - from.ingestSeconds) * 1000) / ingest,
    },
    router: {
      perSecond: router / seconds,
      meanDeliveries: (to.routerDeliveries - from.routerDeliveries) / router,
      meanMs: ((to.routerSeconds - from.routerSeconds) * 1000) / router,
    },
  };
}
