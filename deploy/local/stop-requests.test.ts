import { describe, expect, it } from 'vitest';
import { stopRequestCounter } from './stop-requests.js';

describe('stopRequestCounter', () => {
  it('takes the first request, ignores its echo from npm, and forces on a later one', () => {
    let t = 0;
    const next = stopRequestCounter(() => t);
    expect(next()).toBe('first');
    t = 5;
    expect(next()).toBe('duplicate');
    t = 2_000;
    expect(next()).toBe('force');
    t = 2_001;
    expect(next()).toBe('force');
  });
});
