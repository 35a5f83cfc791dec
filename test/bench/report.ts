/** The run's markdown report: the tables printed at the end and saved beside the JSON. */
import type { ProfileSummary } from './cpu-profile.js';
import type { LatencySummary } from './histogram.js';
import type { BenchResult, PhaseResult, ProcessUsage } from './result.js';
import type { KafkaRequestRates } from './service-metrics.js';

export function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–';
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value < 10 ? value.toFixed(1) : int(value);
}

function ratio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '–';
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? '–' : int(bytes / 1024 / 1024);
}

function latencyCell(latency: LatencySummary): string {
  return `${ms(latency.p50Ms)} / ${ms(latency.p95Ms)} / ${ms(latency.p99Ms)} / ${ms(latency.maxMs)}`;
}

function requestsCell(rates: KafkaRequestRates | undefined): string {
  if (!rates) return '–';
  const services = Object.entries(rates.byService)
    .filter(([, rate]) => rate.perSecond > 0)
    .map(([service, rate]) => `${service} ${int(rate.perSecond)} (${int(rate.per1kEvents)})`)
    .join(', ');
  return `**${int(rates.perSecond)} (${int(rates.per1kEvents)})**: ${services}`;
}

/** The APIs the services call most, largest first. */
function topApis(rates: KafkaRequestRates | undefined, count = 8): string {
  if (!rates) return '–';
  return Object.entries(rates.byApi)
    .filter(([, perSecond]) => perSecond >= 0.5)
    .sort(([, a], [, b]) => b - a)
    .slice(0, count)
    .map(([api, perSecond]) => `${api} ${int(perSecond)}`)
    .join(', ');
}

function phaseTable(max: PhaseResult, steady: PhaseResult): string[] {
  const rows: Array<[string, (p: PhaseResult) => string]> = [
    ['offered, events/s', (p) => int(p.offeredRate)],
    ['accepted by ingest, events/s', (p) => int(p.acceptedRate)],
    ['**delivered to the receiver, events/s**', (p) => `**${int(p.deliveredRate)}**`],
    ['**end-to-end latency p50 / p95 / p99 / max, ms**', (p) => `**${latencyCell(p.latency)}**`],
    ['ingest answer p50 / p95 / p99 / max, ms', (p) => latencyCell(p.requestLatency)],
    ['events sent > 100 ms behind schedule', (p) => int(p.lateEvents)],
    ['backlog at the end (accepted − delivered)', (p) => int(p.backlogAtEnd)],
    ['drained after the phase in, s', (p) => (p.drained ? p.drainSeconds.toFixed(1) : `not within ${p.drainSeconds.toFixed(0)}`)],
    ['consumer lag after the drain, router / dispatcher / indexer', (p) => `${int(p.kafkaLagAtEnd.router)} / ${int(p.kafkaLagAtEnd.dispatcher)} / ${int(p.kafkaLagAtEnd.indexer ?? 0)}`],
    [
      'ingest transactions/s, mean records, mean ms',
      ({ transactions: { ingest } }) => `${int(ingest.perSecond)}, ${int(ingest.meanRecords)}, ${ms(ingest.meanMs)}`,
    ],
    [
      'router transactions/s, mean deliveries, mean ms',
      ({ transactions: { router } }) => `${int(router.perSecond)}, ${int(router.meanDeliveries)}, ${ms(router.meanMs)}`,
    ],
    ['Kafka requests from the services, per second (per 1,000 events)', ({ kafkaRequests }) => requestsCell(kafkaRequests)],
    ['… of which, per second', ({ kafkaRequests }) => topApis(kafkaRequests)],
  ];
  return [
    `| | ${max.label} | ${steady.label} |`,
    '|---|---:|---:|',
    ...rows.map(([label, cell]) => `| ${label} | ${cell(max)} | ${cell(steady)} |`),
  ];
}

/**
 * What share of a Node process's CPU its main thread spent (what a CPU profile sees; the rest is
 * V8's and libuv's threads). "–" for a JVM, whose main thread only waits, and for older results.
 */
export function mainThreadShare(usage: ProcessUsage | undefined): string {
  if (!usage || usage.mainThreadCpuSeconds === undefined || usage.jitCpuSeconds !== undefined || usage.cpuSeconds <= 0) return '–';
  return `${int(Math.min(1, usage.mainThreadCpuSeconds / usage.cpuSeconds) * 100)} %`;
}

function processTable(max: PhaseResult, steady: PhaseResult, idle: ProcessUsage[], whole: ProcessUsage[], idleAfter?: ProcessUsage[]): string[] {
  const find = (list: ProcessUsage[], name: string) => list.find((p) => p.name === name);
  const cells = (usage: ProcessUsage | undefined) =>
    usage ? `${usage.cpuSeconds.toFixed(1)} (${int(usage.systemShare * 100)} %) | ${int(usage.corePercent)} % | ${usage.cpuMsPer1kEvents.toFixed(0)}` : '– | – | –';
  const total = (list: ProcessUsage[]) => list.reduce((sum, p) => sum + p.cpuSeconds, 0);
  const idleCell = (usage: ProcessUsage | undefined) => (usage ? `${int(usage.corePercent)} %` : '–');
  const idleSum = (list: ProcessUsage[]) => `${int(list.reduce((sum, p) => sum + p.corePercent, 0))} %`;
  const after = idleAfter ? ' | idle after the run' : '';
  return [
    `| process | idle: of one core${after} | (a) CPU s (kernel) | (a) of one core | (a) CPU ms / 1k events | (b) CPU s (kernel) | (b) of one core | (b) CPU ms / 1k events | main thread's share, (a) / (b) | peak RSS, MB |`,
    `|---|---:${idleAfter ? '|---:' : ''}|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...max.processes.map(
      ({ name }) =>
        `| ${name} | ${idleCell(find(idle, name))}${idleAfter ? ` | ${idleCell(find(idleAfter, name))}` : ''} | ${cells(find(max.processes, name))} | ${cells(find(steady.processes, name))} | ` +
        `${mainThreadShare(find(max.processes, name))} / ${mainThreadShare(find(steady.processes, name))} | ${mb(find(whole, name)?.peakRssBytes)} |`,
    ),
    `| **all** | ${idleSum(idle)}${idleAfter ? ` | ${idleSum(idleAfter)}` : ''} | ${total(max.processes).toFixed(1)} | ${int((total(max.processes) / max.seconds) * 100)} % | | ` +
      `${total(steady.processes).toFixed(1)} | ${int((total(steady.processes) / steady.seconds) * 100)} % | | | |`,
  ];
}

/** `window` says which part of the run the summary covers ("seconds 300–360 of the run"). */
export function profileMarkdown(service: string, window: string, summary: ProfileSummary): string[] {
  const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
  return [
    `### CPU profile: ${service}, ${window}`,
    '',
    `${(summary.busyMs / 1000).toFixed(1)} s of the main thread's samples were not idle (${pct(summary.totalMs === 0 ? 0 : summary.busyMs / summary.totalMs)}); ` +
      'shares below are of those. Each sample counts one sampling interval, so time the thread waited for a core is not charged to any function. Self time by origin:',
    '',
    '| origin | self time, ms | share |',
    '|---|---:|---:|',
    ...summary.groups.slice(0, 12).map((g) => `| ${g.group} | ${int(g.selfMs)} | ${pct(g.share)} |`),
    '',
    'Top functions by self time:',
    '',
    '| function | origin | self time, ms | share |',
    '|---|---|---:|---:|',
    ...summary.topFunctions.map((f) => `| \`${f.function.replace(/\|/g, '\\|')}\` | ${f.group} | ${int(f.selfMs)} | ${pct(f.share)} |`),
  ];
}

export function renderMarkdown(result: BenchResult, chartFile: string): string {
  const { machine, settings, limits, phases, ratios, integrity, ramp } = result;
  const lines: string[] = [
    `# Tributary end to end — ${result.startedAt}`,
    '',
    `${machine.cpuModel}, ${machine.cores} cores, ${int(machine.memoryBytes / 1024 ** 3)} GB; Linux ${machine.kernel}; Node ${machine.node}; ` +
      `Java ${machine.java}; Kafka ${machine.kafka} and ${machine.registry} (${settings.stackProvider}) on the same machine. ` +
      `${settings.partitions} partitions per topic, batches of ${settings.batchSize} Track calls, one Webhooks destination with a shared secret, ` +
      `LOG_LEVEL=${settings.logLevel}${settings.profiledService ? `, **${settings.profiledService} under --cpu-prof**` : ''}. ` +
      `Load average (1 min) ${machine.loadAverageStart[0]?.toFixed(2)} at the start, ${machine.loadAverageEnd[0]?.toFixed(2)} at the end.`,
    '',
    `(a) = ${settings.holdSeconds} s at the highest rate the ramp sustained (${ramp.why}); (b) = ${int(settings.steadyRate)} events/s for ${settings.steadySeconds} s.`,
    '',
    ...phaseTable(phases.max, phases.steady),
    '',
    '**Limits of this machine, measured in the same run:**',
    '',
    '| limit | rate | pipeline (a) delivered ÷ limit |',
    '|---|---:|---:|',
    `| undici POSTs from one process to the same receiver (${limits.http.connections} connections, the ${int(limits.http.bodyBytes)}-byte webhook body) | ${int(limits.http.requestsPerSecond)}/s | ${ratio(ratios.deliveredVsHttpLimit)} |`,
    `| kafkajs produce → consume, one topic (${limits.kafka.partitions} partitions, batches of 100 × ${limits.kafka.recordBytes} B, acks=all) | ${int(limits.kafka.endToEndPerSecond)}/s | ${ratio(ratios.deliveredVsKafkaLimit)} |`,
    '',
    `**Integrity:** ${int(integrity.acceptedEvents)} events accepted, ${int(integrity.deliveredOfAccepted)} of them delivered, ` +
      `**${int(integrity.lost)} lost**, **${int(integrity.duplicates)} duplicated**; ${int(integrity.deliveredUnacknowledged)} delivered without a 200; ` +
      `signatures ${int(integrity.signatures.valid)} valid, ${int(integrity.signatures.invalid)} invalid, ${int(integrity.signatures.missing)} missing; ` +
      `refused requests ${JSON.stringify(integrity.refusedByStatus)}; consumer lag at the end: router ${int(integrity.kafkaLagAtEnd.router)}, dispatcher ${int(integrity.kafkaLagAtEnd.dispatcher)}, indexer ${int(integrity.kafkaLagAtEnd.indexer ?? 0)}.`,
    '',
    "**CPU and memory per process** (CPU from /proc utime+stime: idle = the services running without load; (a) and (b) over each phase; the main thread's share = its own utime+stime, what a CPU profile sees, the rest being V8's GC and compiler threads and libuv's pool; peak RSS = VmHWM over the process life):",
    '',
    ...processTable(phases.max, phases.steady, result.idle, result.processes, result.idleAfter),
    '',
    ...budgetLines(result),
    '**Ramp** (each step measured over its last seconds):',
    '',
    '| offered/s | accepted/s | delivered/s | latency p50 / p99, ms | backlog growth | Kafka lag growth | sustained |',
    '|---:|---:|---:|---:|---:|---:|---|',
    ...ramp.steps.map(
      (s) =>
        `| ${int(s.targetRate)} | ${int(s.acceptedRate)} | ${int(s.deliveredRate)} | ${s.latency ? `${ms(s.latency.p50Ms)} / ${ms(s.latency.p99Ms)}` : '–'} | ` +
        `${int(s.backlogGrowth)} | ${int(s.kafkaLagGrowth)} | ${s.sustained ? 'yes' : `no: ${s.reasons.join('; ')}`} |`,
    ),
    '',
    `![latency and throughput over time](${chartFile})`,
  ];
  if (result.profile) lines.push('', ...profileMarkdown(result.profile.service, `seconds ${result.profile.windowSeconds[0].toFixed(0)}–${result.profile.windowSeconds[1].toFixed(0)} of the run`, result.profile.summary));
  if (result.notes.length > 0) lines.push('', '**Notes:**', '', ...result.notes.map((note) => `- ${note}`));
  return `${lines.join('\n')}\n`;
}

/** The pipeline's CPU bill (delivery path + broker), with the indexer's share beside it; older results have none. */
function budgetLines({ cpuBudget }: Pick<BenchResult, 'cpuBudget'>): string[] {
  if (!cpuBudget) return [];
  const { maxMsPer1k, steadyMsPer1k, idlePercent, idleAfterPercent, indexer, jit } = cpuBudget;
  const afterRun = (percent: number | undefined) => (percent === undefined ? '' : ` (${percent.toFixed(1)} % after the run)`);
  const compiling = jit
    ? ` (of which the broker's JIT compilers, a cost of a broker minutes old: ${int(jit.maxMsPer1k)} in (a), ${int(jit.steadyMsPer1k)} in (b); ` +
      `without them ${int(maxMsPer1k - jit.maxMsPer1k)} and ${int(steadyMsPer1k - jit.steadyMsPer1k)})`
    : '';
  return [
    `**Pipeline CPU** (${cpuBudget.processes.join(', ')}): **${int(maxMsPer1k)} ms per 1,000 delivered events in (a)**, ${int(steadyMsPer1k)} in (b)${compiling}; ` +
      `**idle ${idlePercent.toFixed(1)} % of one core**${afterRun(idleAfterPercent)}. The indexer (delivery log) adds ${int(indexer.maxMsPer1k)} ms per 1,000 events in (a), ` +
      `${int(indexer.steadyMsPer1k)} in (b), ${indexer.idlePercent.toFixed(1)} % of a core idle${afterRun(indexer.idleAfterPercent)}.`,
    '',
  ];
}
