import { describe, expect, it } from 'vitest';
import { SerialQueue } from './serial.js';

describe('SerialQueue', () => {
  it('runs tasks one at a time in arrival order, past failures', async () => {
    const queue = new SerialQueue();
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = queue.run(async () => {
      events.push('first start');
      await gate;
      events.push('first end');
      throw new Error('first failed');
    });
    const second = queue.run(async () => {
      events.push('second');
      return 2;
    });
    await Promise.resolve();
    expect(events).toEqual(['first start']);
    release();
    await expect(first).rejects.toThrow('first failed');
    await expect(second).resolves.toBe(2);
    expect(events).toEqual(['first start', 'first end', 'second']);
  });

  it('is idle once everything queued has settled', async () => {
    const queue = new SerialQueue();
    let done = false;
    void queue.run(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      done = true;
    });
    await queue.idle();
    expect(done).toBe(true);
  });
});
