/**
 * The live tail's list: each poll's messages (newest first) go on top, a message seen
 * before is not shown twice, and the list is capped so a busy pipeline does not grow the
 * page without end.
 */
import type { TailMessage } from './api';

export const TAIL_POLL_MS = 1_000;
export const TAIL_MAX_ROWS = 500;

/** A messageId is unique per source only. */
export function tailKey(message: Pick<TailMessage, 'sourceId' | 'messageId'>): string {
  return `${message.sourceId}\u0000${message.messageId}`;
}

export function mergeNewest(shown: readonly TailMessage[], incoming: readonly TailMessage[], max = TAIL_MAX_ROWS): TailMessage[] {
  const seen = new Set<string>();
  const merged: TailMessage[] = [];
  for (const message of [...incoming, ...shown]) {
    const key = tailKey(message);
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(message);
    if (merged.length === max) break;
  }
  return merged;
}

/** The name a tail row shows for a message: the event, page or screen name, or the type. */
export function messageLabel(message: Pick<TailMessage, 'type' | 'event' | 'message'>): string {
  if (message.event) return message.event;
  const body = message.message;
  if (typeof body === 'object' && body !== null && 'name' in body && typeof body.name === 'string' && body.name !== '') return body.name;
  return message.type;
}

/** Who a message is about: the userId, else the anonymousId marked as such. */
export function whoOf(message: Pick<TailMessage, 'userId' | 'anonymousId'>): string {
  if (message.userId) return message.userId;
  if (message.anonymousId) return `anon ${message.anonymousId}`;
  return '—';
}
