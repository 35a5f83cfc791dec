/**
 * `tributary destinations summary`: per destination over a time range, how deliveries went —
 * success rate, delivery latency, what waits on the retry ladder, dead letters, and the
 * circuit the dispatchers report. Pure.
 */
import { formatTable } from '../format.js';
import type { DeliverySummary } from './answers.js';
import { cell, duration, percent } from './text.js';

const COLUMNS = ['DESTINATION', 'ATTEMPTS', 'SUCCESS', 'LATENCY P50', 'LATENCY P95', 'RETRIES PENDING', 'DEAD LETTERS', 'CIRCUIT'] as const;

export function formatSummaries(summaries: readonly DeliverySummary[], range: { since: string; until: string }): string[] {
  if (summaries.length === 0) return ['no destinations'];
  const rows = summaries.map((summary) => [
    cell(summary.destinationId),
    String(summary.attempts),
    percent(summary.successRate),
    duration(summary.latency.deliveryP50Ms),
    duration(summary.latency.deliveryP95Ms),
    String(summary.retriesPending),
    String(summary.deadLetters),
    summary.circuit === null ? 'unknown' : cell(summary.circuit.state),
  ]);
  const lines = formatTable(COLUMNS, rows);
  lines.push(
    `from ${range.since} to ${range.until}: SUCCESS = delivered ÷ attempts that sent requests; LATENCY = receipt to delivery; RETRIES PENDING = waiting on the retry ladder now`,
  );
  if (summaries.some((summary) => summary.circuit === null)) lines.push('CIRCUIT unknown: no dispatcher has reported on the destination (none is delivering to it now)');
  return lines;
}
