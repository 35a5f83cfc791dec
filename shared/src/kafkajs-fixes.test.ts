import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { applyKafkajsFixes } from './kafkajs-fixes.js';

const require = createRequire(import.meta.url);
type Queue = { pending: unknown[]; throttledUntil: number; throttleCheckTimeoutId: NodeJS.Timeout | null; scheduleCheckPendingRequests(): void; checkPendingRequests(): void };
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;

const queues: Queue[] = [];
function queue(): Queue {
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const created = new RequestQueue({ instrumentationEmitter: null, maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:1', logger, isConnected: () => true });
  queues.push(created);
  return created;
}
afterEach(() => {
  for (const created of queues.splice(0)) if (created.throttleCheckTimeoutId) clearTimeout(created.throttleCheckTimeoutId);
});

describe('kafkajs RequestQueue fix', () => {
  it('arms no timer when nothing is pending or throttled (kafkajs 2.2.4 looped on a 1 ms timer for ever)', () => {
    expect(applyKafkajsFixes()).toBe(true);
    const idle = queue();
    idle.checkPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('still re-checks a queue with a request waiting, and wakes when a throttle ends', async () => {
    applyKafkajsFixes();
    const waiting = queue();
    let checks = 0;
    waiting.pending.push({});
    waiting.checkPendingRequests = () => void checks++;
    waiting.scheduleCheckPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(checks).toBe(1);

    const throttled = queue();
    throttled.throttledUntil = Date.now() + 1_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
  });
});
