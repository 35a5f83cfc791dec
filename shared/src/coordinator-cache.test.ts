import { describe, expect, it } from 'vitest';
import { coordinatorMayHaveMoved, CoordinatorCache } from './coordinator-cache.js';

const GROUP = 0;
const TRANSACTION = 1;

describe('CoordinatorCache', () => {
  it('remembers a coordinator per key and type', () => {
    const cache = new CoordinatorCache({ ttlMs: 30_000, now: () => 0 });
    cache.set('dispatcher', GROUP, 1);
    cache.set('dispatcher', TRANSACTION, 2);
    expect(cache.get('dispatcher', GROUP)).toBe(1);
    expect(cache.get('dispatcher', TRANSACTION)).toBe(2);
    expect(cache.get('router', GROUP)).toBeUndefined();
  });

  it('looks again once the entry is as old as the ttl', () => {
    let now = 0;
    const cache = new CoordinatorCache({ ttlMs: 30_000, now: () => now });
    cache.set('ingest-1', TRANSACTION, 3);
    now = 29_999;
    expect(cache.get('ingest-1', TRANSACTION)).toBe(3);
    now = 30_000;
    expect(cache.get('ingest-1', TRANSACTION)).toBeUndefined();
  });

  it('forgets every entry of every cache after a failed coordinator request, and remembers what is found after', () => {
    const one = new CoordinatorCache({ ttlMs: 30_000, now: () => 0 });
    const other = new CoordinatorCache({ ttlMs: 30_000, now: () => 0 });
    one.set('a', GROUP, 1);
    other.set('b', TRANSACTION, 1);
    CoordinatorCache.forgetAll();
    expect(one.get('a', GROUP)).toBeUndefined();
    expect(other.get('b', TRANSACTION)).toBeUndefined();
    one.set('a', GROUP, 2);
    expect(one.get('a', GROUP)).toBe(2);
  });

  it('forgets one entry on request', () => {
    const cache = new CoordinatorCache({ ttlMs: 30_000, now: () => 0 });
    cache.set('a', GROUP, 1);
    cache.forget('a', GROUP);
    expect(cache.get('a', GROUP)).toBeUndefined();
  });
});

describe('coordinatorMayHaveMoved', () => {
  it('is told by the broker, or by a request that got no answer', () => {
    expect(coordinatorMayHaveMoved({ type: 'NOT_COORDINATOR_FOR_GROUP' })).toBe(true);
    expect(coordinatorMayHaveMoved({ type: 'GROUP_COORDINATOR_NOT_AVAILABLE' })).toBe(true);
    expect(coordinatorMayHaveMoved(Object.assign(new Error('Connection closed'), { name: 'KafkaJSConnectionClosedError' }))).toBe(true);
    expect(coordinatorMayHaveMoved(new TypeError('x is undefined'))).toBe(true);
  });

  it('is not what the coordinator itself answers', () => {
    expect(coordinatorMayHaveMoved({ type: 'CONCURRENT_TRANSACTIONS' })).toBe(false);
    expect(coordinatorMayHaveMoved({ type: 'REBALANCE_IN_PROGRESS' })).toBe(false);
    expect(coordinatorMayHaveMoved({ type: 'INVALID_PRODUCER_EPOCH' })).toBe(false);
  });
});
