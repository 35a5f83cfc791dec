/**
 * Fixes to kafkajs 2.2.4 (unmaintained since 2023: the fixes below sit in open pull requests)
 * applied where the services create their Kafka client, so that one module decides how Kafka
 * is spoken to.
 *
 * RequestQueue.scheduleCheckPendingRequests (kafkajs issues #1556, #1604, #1704): after any
 * request is answered it re-arms a timer even when no request is pending and nothing is
 * throttled, with a negative delay — so every broker connection of every producer, consumer
 * and admin client runs a 1 ms setTimeout loop for the rest of its life. Measured here: about
 * 2 % of a core per idle service (ingest, router, dispatcher, retry-scheduler, indexer alike),
 * and a thousand needless wake-ups a second per connection under load. The replacement keeps
 * the checks that matter — a pending request, or a throttle to wait out — and arms nothing
 * otherwise; `push` arms it again when a request has to wait.
 */
import { createRequire } from 'node:module';

/** kafkajs's own interval for re-checking a queue with requests waiting. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
let applied = false;

/** The version the fix was written against; another version is left as it is. */
export const FIXED_KAFKAJS_VERSION = '2.2.4';

export function applyKafkajsFixes(): boolean {
  if (applied) return true;
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
    if (this.throttleCheckTimeoutId) return;
    const throttledFor = this.throttledUntil - Date.now();
    let delay: number;
    if (this.pending.length > 0) delay = throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS;
    else if (throttledFor > 0) delay = throttledFor;
    else return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delay);
  };
  applied = true;
  return true;
}
