/**
 * Isolation figure: the delivery rate to a healthy destination alone, then with a
 * destination that hangs for the whole WEBHOOK_TIMEOUT (5 s) on every request receiving
 * as many deliveries on the same topic, interleaved with the healthy ones.
 *
 * Each phase writes its whole backlog to a fresh namespace first and then starts the
 * dispatcher, so the dispatcher — not the test's producer — sets the pace. The rate is
 * measured at the healthy receiver, from its first to its last request of the phase.
 *
 * Two healthy receivers are measured: one answering in 50 ms (a webhook endpoint across a
 * network), where the rate alone is bounded by the destination's 64 concurrent requests and
 * the figure shows whether the hanging destination takes anything from it; and one
 * answering at once, where the dispatcher's CPU is the bound — beside the hanging
 * destination it reads twice the records and writes a deferral for most of the second
 * half, so that figure also carries the cost of that extra work on a shared machine.
 *
 *   npx tsc -b services/dispatcher && cd services/dispatcher && npm run bench
 *   ISOLATION_DELIVERIES=5000 npm run bench    # deliveries per destination (default 10,000)
 *   ISOLATION_CPU_PROF=/tmp/prof npm run bench  # each dispatcher under --cpu-prof, profiles there
 */
import { expect, it } from 'vitest';
import { metricValue, startService, uniqueNamespace } from '@tributary/test/harness';
import { DEFAULT_LADDER } from '@tributary/shared';
import { eventually, TestPipeline, webhooksDestination } from '../test/pipeline.js';
import { startReceiverProcess, type ReceiverProcess } from './receiver-process.js';

const DELIVERIES = Number(process.env.ISOLATION_DELIVERIES ?? 10_000);

interface Phase {
  rate: number;
  seconds: number;
  deferred: number;
}

async function runPhase(name: string, healthy: ReceiverProcess, hanging: ReceiverProcess | undefined): Promise<Phase> {
  const pipeline = new TestPipeline(uniqueNamespace(`iso-${name}`), DEFAULT_LADDER);
  await pipeline.start();
  try {
    await pipeline.putDestination(webhooksDestination('healthy', [{ url: healthy.url('/healthy') }]));
    if (hanging) await pipeline.putDestination(webhooksDestination('hanging', [{ url: hanging.url('/hanging') }]));
    const items = [];
    for (let n = 0; n < DELIVERIES; n++) {
      items.push({ destinationId: 'healthy', body: { type: 'track', event: 'Bench', properties: { n } } });
      if (hanging) items.push({ destinationId: 'hanging', body: { type: 'track', event: 'Bench', properties: { n } } });
    }
    await pipeline.deliverMany(items);

    await healthy.reset();
    const profileDir = process.env.ISOLATION_CPU_PROF;
    const dispatcher = await startService('dispatcher', {
      nodeArgs: profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `dispatcher-${name}-${Date.now()}.cpuprofile`] : [],
      env: pipeline.env({ DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT: '5s', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }),
    });
    try {
      const stats = await eventually(async () => {
        const current = await healthy.stats();
        return current.count >= DELIVERIES && current;
      }, `${DELIVERIES} healthy deliveries`, 300_000);
      const seconds = (stats.last - stats.first) / 1000;
      return { rate: stats.count / seconds, seconds, deferred: await metricValue(dispatcher.url, 'tributary_dispatcher_deferred_total') };
    } finally {
      await dispatcher.stop();
    }
  } finally {
    await pipeline.stop();
  }
}

async function scenario(label: string, answerAfterMs: number): Promise<string> {
  const healthy = await startReceiverProcess({ answerAfterMs });
  const hanging = await startReceiverProcess({ hang: true });
  try {
    const alone = await runPhase('alone', healthy, undefined);
    const beside = await runPhase('beside', healthy, hanging);
    const hangingStats = await hanging.stats();
    // Functional check only (the figure is reported): the hanging destination's surplus was deferred, not held.
    expect(beside.deferred).toBeGreaterThan(0);
    return [
      `${label}:`,
      `  healthy alone:          ${alone.rate.toFixed(0)} deliveries/s (${alone.seconds.toFixed(2)} s)`,
      `  healthy beside hanging: ${beside.rate.toFixed(0)} deliveries/s (${beside.seconds.toFixed(2)} s)`,
      `  ratio:                  ${(beside.rate / alone.rate).toFixed(3)}`,
      `  hanging destination:    ${hangingStats.count} requests sent (each held 5 s), ${beside.deferred} deliveries deferred to the first retry tier`,
    ].join('\n');
  } finally {
    await healthy.stop();
    await hanging.stop();
  }
}

it('measures the healthy destination alone and beside one that hangs', async () => {
  const reports = [
    await scenario('healthy receiver answering in 50 ms', 50),
    await scenario('healthy receiver answering at once', 0),
  ];
  console.log([`isolation: ${DELIVERIES} deliveries per destination, one topic, WEBHOOK_TIMEOUT 5s, LOG_LEVEL ${process.env.BENCH_LOG_LEVEL ?? 'info'}`, ...reports].join('\n'));
});
