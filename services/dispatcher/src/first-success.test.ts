import { describe, expect, it } from 'vitest';
import { settleOnFirstSuccess } from './first-success.js';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('settleOnFirstSuccess', () => {
  it('settles at the first success without waiting for slower URLs', async () => {
    const started = Date.now();
    const results = await settleOnFirstSuccess([after(5_000, 'hang'), after(20, 'fail'), after(40, 'ok')], (r) => r === 'ok');
    expect(results).toEqual(['fail', 'ok']);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('waits for every URL when none succeeds, in completion order', async () => {
    expect(await settleOnFirstSuccess([after(30, 'a'), after(10, 'b'), after(20, 'c')], () => false)).toEqual(['b', 'c', 'a']);
  });

  it('handles no URLs and propagates an unexpected rejection', async () => {
    expect(await settleOnFirstSuccess([], () => true)).toEqual([]);
    await expect(settleOnFirstSuccess([Promise.reject(new Error('bug'))], () => true)).rejects.toThrow('bug');
  });
});
