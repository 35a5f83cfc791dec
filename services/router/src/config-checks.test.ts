import { describe, expect, it } from 'vitest';
import { ConfigChecks, CONFIRMED_FOR_MS } from './config-checks.js';

const T = 1_000_000;

describe('ConfigChecks', () => {
  it('asks for a check as recent as the newest filtered message of sources no check has confirmed', () => {
    const checks = new ConfigChecks();
    expect(checks.neededSince(new Map())).toBeUndefined();
    expect(
      checks.neededSince(
        new Map([
          ['a', T - 50],
          ['b', T - 10],
        ]),
      ),
    ).toBe(T - 10);
  });

  it('does not check a source that stays filtered again within CONFIRMED_FOR_MS of its last confirmation', () => {
    const checks = new ConfigChecks();
    checks.confirmed(new Map([['quiet', T]]), T);
    expect(checks.neededSince(new Map([['quiet', T + CONFIRMED_FOR_MS]]))).toBeUndefined();
    expect(checks.neededSince(new Map([['quiet', T + CONFIRMED_FOR_MS + 1]]))).toBe(T + CONFIRMED_FOR_MS + 1);
  });

  it('always checks a source it has not confirmed — one created a moment ago — beside one it has', () => {
    const checks = new ConfigChecks();
    checks.confirmed(new Map([['quiet', T]]), T);
    expect(
      checks.neededSince(
        new Map([
          ['quiet', T + 5],
          ['new', T + 3],
        ]),
      ),
    ).toBe(T + 3);
  });
});
