/**
 * `tributary messages show`: what happened to one message — the message as accepted, the
 * router's decision per destination, then each delivery's state over its attempt timeline
 * (oldest first), each attempt followed by its URLs' results. Pure.
 */
import { formatTable } from '../format.js';
import type { Attempt, DeliveryStatus, IndexedMessage, MessageHistory } from './answers.js';
import { attemptDetail, attemptLabel, statusCell, targetLine } from './attempts.js';
import { cell, duration, plural, printable } from './text.js';

/** `web · track "Signed Up" · user u-1 · received … · timestamp …`. */
export function messageLine(message: IndexedMessage): string {
  const what = message.event === null ? message.type : `${message.type} "${printable(message.event)}"`;
  const who = message.userId !== null ? `user ${printable(message.userId)}` : message.anonymousId !== null ? `anonymous ${printable(message.anonymousId)}` : 'no user';
  return `source ${printable(message.sourceId)} · ${what} · ${who} · received ${message.receivedAt} · timestamp ${message.timestamp}`;
}

/** The delivery's state in a sentence: `delivered at … after 2 attempts, 10.2s after it was received`. */
export function deliveryState(delivery: DeliveryStatus): string {
  const attempts = plural(delivery.attempts, 'attempt');
  const last = delivery.lastError !== null ? `; last error: ${printable(delivery.lastError)}` : delivery.lastStatus !== null ? `; last status ${delivery.lastStatus}` : '';
  switch (delivery.state) {
    case 'pending':
      return 'pending: routed, no attempt yet';
    case 'delivered':
      return `delivered at ${cell(delivery.deliveredAt)} after ${attempts}, ${duration(delivery.latencyMs)} after it was received`;
    case 'retrying':
      return `retrying: ${attempts} so far, next attempt ${cell(delivery.nextAttemptAt)}${last}`;
    case 'deferred':
      return `deferred without a request: ${attempts} so far, next attempt ${cell(delivery.nextAttemptAt)}${last}`;
    case 'dead':
      return `dead after ${attempts}${last}`;
    default:
      // A state newer than this CLI: shown as the API names it.
      return `${printable(String(delivery.state))}: ${attempts}${last}`;
  }
}

const TIMELINE_COLUMNS = ['TIME', 'ATTEMPT', 'OUTCOME', 'STATUS', 'DURATION', 'DETAIL'] as const;

/** A delivery's attempts, oldest first, each with its URLs' results beneath it. */
export function timeline(attempts: readonly Attempt[]): string[] {
  if (attempts.length === 0) return [];
  const rows = attempts.map((attempt) => [attempt.startedAt, attemptLabel(attempt), attempt.outcome, statusCell(attempt), duration(attempt.durationMs), attemptDetail(attempt)]);
  const [header, ...lines] = formatTable(TIMELINE_COLUMNS, rows);
  const out = [header!];
  for (const [index, line] of lines.entries()) {
    out.push(line);
    for (const target of attempts[index]!.targets) out.push(`    ${targetLine(target)}`);
  }
  return out;
}

const key = (sourceId: string, deliveryId: string) => `${sourceId}\u0000${deliveryId}`;

interface DeliveryGroup {
  delivery: DeliveryStatus | undefined;
  sourceId: string;
  destinationId: string;
  attempts: Attempt[];
}

/**
 * Attempts by delivery, in the order of the deliveries (source, then destination); attempts
 * of a delivery whose state is not in the answer (it can trail its attempts by a moment)
 * follow, in their own group.
 */
export function groupByDelivery(history: Pick<MessageHistory, 'deliveries' | 'attempts'>): DeliveryGroup[] {
  const groups = new Map<string, DeliveryGroup>();
  for (const delivery of history.deliveries) {
    groups.set(key(delivery.sourceId, delivery.deliveryId), { delivery, sourceId: delivery.sourceId, destinationId: delivery.destinationId, attempts: [] });
  }
  for (const attempt of history.attempts) {
    const id = key(attempt.sourceId, attempt.deliveryId);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { delivery: undefined, sourceId: attempt.sourceId, destinationId: attempt.destinationId, attempts: [] }));
    group.attempts.push(attempt);
  }
  return [...groups.values()];
}

export function formatMessageHistory(history: MessageHistory): string[] {
  const lines = [`message ${printable(history.messageId)}`];
  if (history.messages.length === 0) lines.push('  not in the log itself (not indexed yet, or past retention): only its attempts are');
  for (const message of history.messages) {
    lines.push(`  ${messageLine(message)}`);
    // JSON escapes C0 controls but not C1 ones or bidi overrides.
    lines.push(...JSON.stringify(message.message, null, 2).split('\n').map((line) => `    ${printable(line)}`));
  }

  lines.push('', 'routing');
  if (history.routing.length === 0) lines.push('  no routing decision in the log');
  else {
    const rows = history.routing.map((entry) => [cell(entry.sourceId), entry.destinationId === null ? '(all)' : cell(entry.destinationId), entry.decision, cell(entry.reason)]);
    lines.push(...formatTable(['SOURCE', 'DESTINATION', 'DECISION', 'REASON'], rows).map((line) => `  ${line}`));
  }

  const groups = groupByDelivery(history);
  if (groups.length === 0) lines.push('', 'no deliveries');
  for (const group of groups) {
    const state = group.delivery ? deliveryState(group.delivery) : 'state not indexed yet';
    lines.push('', `delivery to ${printable(group.destinationId)} (source ${printable(group.sourceId)}): ${state}`);
    lines.push(...timeline(group.attempts).map((line) => `  ${line}`));
  }
  return lines;
}
