import { afterEach, describe, expect, it, vi } from 'vitest';
import { startedByNpmScript, watchParent } from './parent-watch.js';

describe('startedByNpmScript', () => {
  it('is true only for the named npm script', () => {
    expect(startedByNpmScript({ npm_lifecycle_event: 'start' }, 'start')).toBe(true);
    expect(startedByNpmScript({ npm_lifecycle_event: 'test' }, 'start')).toBe(false);
    expect(startedByNpmScript({}, 'start')).toBe(false);
  });
});

describe('watchParent', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports, once, the parent that went away', () => {
    vi.useFakeTimers();
    let ppid = 100;
    const gone: number[] = [];
    watchParent({ parentPid: () => ppid, onGone: (p) => gone.push(p), intervalMs: 1_000 });
    vi.advanceTimersByTime(5_000);
    expect(gone).toEqual([]);
    ppid = 1;
    vi.advanceTimersByTime(1_000);
    expect(gone).toEqual([100]);
    ppid = 7;
    vi.advanceTimersByTime(5_000);
    expect(gone).toEqual([100]);
  });

  it('stops watching when told to', () => {
    vi.useFakeTimers();
    let ppid = 100;
    const onGone = vi.fn();
    const stop = watchParent({ parentPid: () => ppid, onGone });
    stop();
    ppid = 1;
    vi.advanceTimersByTime(10_000);
    expect(onGone).not.toHaveBeenCalled();
  });
});
