import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArrivalQueue } from './arrival-queue.js';

describe('ArrivalQueue', () => {
  it('gives keys back oldest first, with their times', () => {
    const queue = new ArrivalQueue();
    expect(queue.frontKey()).toBeUndefined();
    expect(queue.frontAt()).toBeNaN();
    queue.push('a', 1);
    queue.push('b', 2);
    expect([queue.size, queue.frontKey(), queue.frontAt()]).toEqual([2, 'a', 1]);
    queue.dropFront();
    expect([queue.size, queue.frontKey(), queue.frontAt()]).toEqual([1, 'b', 2]);
    queue.dropFront();
    queue.dropFront();
    expect([queue.size, queue.frontKey()]).toEqual([0, undefined]);
  });

  it('behaves as an array used first in, first out, across chunk ends, whatever the mix of pushes and drops', () => {
    const operation = fc.oneof(fc.record({ push: fc.nat(20_000) }), fc.record({ drop: fc.nat(20_000) }));
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const queue = new ArrivalQueue();
        const model: Array<[string, number]> = [];
        let next = 0;
        for (const op of operations) {
          if ('push' in op) {
            for (let i = 0; i < op.push; i++, next++) {
              queue.push(`k${next}`, next);
              model.push([`k${next}`, next]);
            }
          } else {
            for (let i = 0; i < op.drop; i++) queue.dropFront();
            model.splice(0, op.drop);
          }
          expect(queue.size).toBe(model.length);
          expect(queue.frontKey()).toBe(model[0]?.[0]);
          if (model.length > 0) expect(queue.frontAt()).toBe(model[0]![1]);
        }
      }),
      { numRuns: 60 },
    );
  });
});
