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

/** `tributary_kafka_requests_total` of each service, by API: requests sent since it started. */
export type KafkaRequestCounts = Record<string, Record<string, number>>;

export interface KafkaRequestRates {
  /** All services together. */
  perSecond: number;
  per1kEvents: number;
  byService: Record<string, { perSecond: number; per1kEvents: number }>;
  /** All services together, by protocol API, per second. */
  byApi: Record<string, number>;
}

/** Reads each service's Kafka request counters (a service that does not answer counts nothing). */
export async function readKafkaRequests(services: Array<{ name: string; url: string }>): Promise<KafkaRequestCounts> {
  const counts: KafkaRequestCounts = {};
  await Promise.all(
    services.map(async ({ name, url }) => {
      try {
        counts[name] = parseKafkaRequests(await (await fetch(`${url}/metrics`)).text());
      } catch {
        counts[name] = {};
      }
    }),
  );
  return counts;
}

/** The `api` label and value of each `tributary_kafka_requests_total` sample in a /metrics text. */
export function parseKafkaRequests(text: string): Record<string, number> {
  const byApi: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^tributary_kafka_requests_total\{([^}]*)\} (\S+)$/.exec(line);
    const api = match && /(?:^|,)api="([^"]*)"/.exec(match[1]!)?.[1];
    if (match && api) byApi[api] = (byApi[api] ?? 0) + Number(match[2]);
  }
  return byApi;
}

export function kafkaRequestRates(from: KafkaRequestCounts, to: KafkaRequestCounts, seconds: number, deliveredEvents: number): KafkaRequestRates {
  const byService: KafkaRequestRates['byService'] = {};
  const byApi: Record<string, number> = {};
  let total = 0;
  for (const [service, apis] of Object.entries(to)) {
    let sent = 0;
    for (const [api, count] of Object.entries(apis)) {
      const delta = count - (from[service]?.[api] ?? 0);
      sent += delta;
      byApi[api] = (byApi[api] ?? 0) + delta / seconds;
    }
    total += sent;
    byService[service] = { perSecond: sent / seconds, per1kEvents: deliveredEvents > 0 ? (sent * 1000) / deliveredEvents : 0 };
  }
  return { perSecond: total / seconds, per1kEvents: deliveredEvents > 0 ? (total * 1000) / deliveredEvents : 0, byService, byApi };
}
