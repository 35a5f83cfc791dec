/**
 * Loading admin API answers into a page: the latest data, the latest error (shown beside the
 * data it did not replace), and an optional refresh that starts only after the previous load
 * ended, so a slow API is never asked twice at once.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** When the data was last loaded (ms). */
  loadedAt: number | undefined;
  reload: () => void;
}

interface ResourceState<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  loadedAt: number | undefined;
}

export interface ResourceOptions<T> {
  /** Load again this long after each load ends. */
  refreshMs?: number;
  /** Whether to keep refreshing, asked after each load; refreshes for as long as the page is open when not given. */
  refreshWhile?: (data: T | undefined, error: Error | undefined) => boolean;
  /** False holds the load back (a form with problems, say). */
  enabled?: boolean;
}

const LOADING = { data: undefined, error: undefined, loading: true, loadedAt: undefined };

export function useResource<T>(load: () => Promise<T>, deps: readonly unknown[], options: ResourceOptions<T> = {}): Resource<T> {
  const { refreshMs, enabled = true } = options;
  const [state, setState] = useState<ResourceState<T>>(LOADING);
  const generation = useRef(0);
  const refreshWhile = useRef(options.refreshWhile);
  refreshWhile.current = options.refreshWhile;
  // The caller names what `load` depends on, as with useEffect: a new closure each render must not reload.
  const run = useCallback(load, deps);

  const fetchNow = useCallback(
    async (expected: number): Promise<{ data?: T; error?: Error }> => {
      setState((previous) => ({ ...previous, loading: true }));
      try {
        const data = await run();
        if (expected === generation.current) setState({ data, error: undefined, loading: false, loadedAt: Date.now() });
        return { data };
      } catch (thrown) {
        const error = thrown instanceof Error ? thrown : new Error(String(thrown));
        if (expected === generation.current) setState((previous) => ({ ...previous, error, loading: false }));
        return { error };
      }
    },
    [run],
  );

  useEffect(() => {
    if (!enabled) {
      setState({ ...LOADING, loading: false });
      return undefined;
    }
    const mine = ++generation.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setState(LOADING);
    const tick = async () => {
      const outcome = await fetchNow(mine);
      if (!refreshMs || mine !== generation.current) return;
      if (refreshWhile.current && !refreshWhile.current(outcome.data, outcome.error)) return;
      timer = setTimeout(() => void tick(), refreshMs);
    };
    void tick();
    return () => {
      generation.current++;
      if (timer) clearTimeout(timer);
    };
  }, [fetchNow, refreshMs, enabled]);

  const reload = useCallback(() => void fetchNow(generation.current), [fetchNow]);
  return { ...state, reload };
}

/** The time now, updated every `everyMs`, for "3 s ago" labels. */
export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
