/**
 * Every request this process sends to Kafka, counted by API, whichever client sends it
 * (producers, consumers, admin clients): `tributary_kafka_requests_total{api}`. What a service
 * costs the broker follows its requests more than its records — a transaction is five or six
 * round trips whatever it carries — and the count is exact where CPU figures on a shared
 * machine move by a sixth from run to run. Counted at kafkajs's Connection, the one place
 * every request passes, installed with the kafkajs fixes.
 */
import { Counter, type Registry } from 'prom-client';

const sent = new Map<string, number>();

/** kafkajs still calls FindCoordinator by its pre-0.11 name. */
const PROTOCOL_NAMES: Record<string, string> = { GroupCoordinator: 'FindCoordinator' };

export function noteKafkaRequest(apiName: string): void {
  const name = PROTOCOL_NAMES[apiName] ?? apiName;
  sent.set(name, (sent.get(name) ?? 0) + 1);
}

/** Requests sent so far by this process, by protocol API name. */
export function kafkaRequestsSent(): ReadonlyMap<string, number> {
  return sent;
}

/** Registers `tributary_kafka_requests_total{api}`, read from the process's counts at each scrape. */
export function registerKafkaRequestsMetric(registry: Registry): void {
  const reported = new Map<string, number>();
  new Counter({
    name: 'tributary_kafka_requests_total',
    help: 'Requests sent to Kafka by this process, by protocol API (Produce, Fetch, EndTxn, FindCoordinator…)',
    labelNames: ['api'],
    registers: [registry],
    collect() {
      for (const [api, total] of sent) {
        const before = reported.get(api) ?? 0;
        if (total > before) this.labels(api).inc(total - before);
        reported.set(api, total);
      }
    },
  });
}
