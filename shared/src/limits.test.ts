import { describe, expect, it } from 'vitest';
import { deliveryTimesProblem, MAX_DATE_MS, retryTimesProblem, timeProblem } from './limits.js';

describe('record times', () => {
  it('takes every time a Date holds, and names the field of one it does not', () => {
    expect(timeProblem('dueAt', 0)).toBeUndefined();
    expect(timeProblem('dueAt', -MAX_DATE_MS)).toBeUndefined();
    expect(timeProblem('dueAt', MAX_DATE_MS)).toBeUndefined();
    expect(() => new Date(MAX_DATE_MS).toISOString()).not.toThrow();
    expect(timeProblem('dueAt', MAX_DATE_MS + 1)).toBe(`dueAt is not a valid time: ${MAX_DATE_MS + 1}`);
    expect(() => new Date(MAX_DATE_MS + 1).toISOString()).toThrow(RangeError);
    expect(timeProblem('dueAt', 1.5)).toMatch(/not a valid time/);
    expect(timeProblem('firstAttemptAt', null, false)).toBeUndefined();
    expect(timeProblem('receivedAt', null)).toBe('receivedAt is missing');
  });

  it('checks a delivery’s and a retry record’s times', () => {
    const delivery = { receivedAt: 1, routedAt: 2, firstAttemptAt: null };
    expect(deliveryTimesProblem(delivery)).toBeUndefined();
    expect(deliveryTimesProblem({ ...delivery, firstAttemptAt: 8.7e15 })).toBe('firstAttemptAt is not a valid time: 8700000000000000');
    expect(retryTimesProblem({ dueAt: 3, delivery })).toBeUndefined();
    expect(retryTimesProblem({ dueAt: 2 ** 53 - 1, delivery })).toMatch(/^dueAt is not a valid time/);
    expect(retryTimesProblem({ dueAt: 3, delivery: { ...delivery, routedAt: -9e15 } })).toMatch(/^routedAt/);
  });
});
