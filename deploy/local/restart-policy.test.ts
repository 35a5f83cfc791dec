import { describe, expect, it } from 'vitest';
import { afterExit, crashBackoff } from './restart-policy.js';

describe('afterExit', () => {
  it('restarts a crashed service after a back-off that doubles with each crash in a row, up to a minute', () => {
    let crashes = 0;
    const delays: number[] = [];
    for (let n = 0; n < 9; n++) {
      const decision = afterExit(1, 500, crashes);
      if (decision.kind !== 'restart') throw new Error('expected a restart');
      delays.push(decision.delayMs);
      crashes = decision.crashesInARow;
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('starts the back-off afresh for a service that ran a while, and restarts a killed one (no exit code) too', () => {
    expect(afterExit(null, 120_000, 6)).toEqual({ kind: 'restart', delayMs: 1_000, crashesInARow: 1 });
  });

  it('stops the run for invalid settings, which no restart fixes', () => {
    expect(afterExit(2, 100, 0)).toMatchObject({ kind: 'stop' });
  });
});

describe('crashBackoff', () => {
  it('is the same ladder the services get, for the JVMs (which have no exit code that means "do not restart")', () => {
    expect(crashBackoff(500, 0)).toEqual({ delayMs: 1_000, crashesInARow: 1 });
    expect(crashBackoff(500, 3)).toEqual({ delayMs: 8_000, crashesInARow: 4 });
    expect(crashBackoff(500, 20)).toEqual({ delayMs: 60_000, crashesInARow: 21 });
    expect(crashBackoff(60_000, 20)).toEqual({ delayMs: 1_000, crashesInARow: 1 });
  });
});
