/**
 * When the noisy-neighbour scenario's warm-up may end. A broker minutes old still compiles its
 * hot paths in HotSpot's C1/C2 threads: in runs on a broker the bench had just started, its
 * compilers used 4–7 s of CPU during the first (control) burst against 0.3 s on a broker an
 * earlier run had warmed — compilation competing for the same two cores as the trickle being
 * measured, in the first measured burst more than the later ones. So the warm-up load goes on
 * past its minimum until the compilers have (nearly) stopped, or its maximum is reached.
 */

/** The broker counts as warm when its compiler threads used less than this share of one core… */
export const WARM_JIT_CORE_SHARE = 0.01;
/** …over the last this many seconds of the warm-up load. */
export const WARM_WINDOW_SECONDS = 30;

/** The broker's compiler threads' CPU since the warm-up began, at a time into it. */
export interface JitSample {
  atSeconds: number;
  jitSeconds: number;
}

export type WarmupVerdict =
  | { done: false }
  | {
      done: true;
      /** `warm`: the compilers went quiet; `limit`: the maximum came first. */
      reason: 'warm' | 'limit';
      /** The compilers' share of one core over the last window (undefined: no full window yet). */
      jitCoreShare: number | undefined;
    };

/** The compilers' share of a core over the last full window of `samples` (in time order), if there is one. */
export function lastWindowShare(samples: readonly JitSample[], windowSeconds = WARM_WINDOW_SECONDS): number | undefined {
  const last = samples.at(-1);
  if (!last) return undefined;
  const from = samples.findLast((sample) => sample.atSeconds <= last.atSeconds - windowSeconds);
  if (!from) return undefined;
  return (last.jitSeconds - from.jitSeconds) / (last.atSeconds - from.atSeconds);
}

/** Pure: whether the warm-up may end after `samples`, with at least `minSeconds` and at most `maxSeconds` of load. */
export function warmupVerdict(samples: readonly JitSample[], minSeconds: number, maxSeconds: number): WarmupVerdict {
  const last = samples.at(-1);
  if (!last || last.atSeconds < minSeconds) return { done: false };
  const share = lastWindowShare(samples);
  if (share !== undefined && share < WARM_JIT_CORE_SHARE) return { done: true, reason: 'warm', jitCoreShare: share };
  if (last.atSeconds >= maxSeconds) return { done: true, reason: 'limit', jitCoreShare: share };
  return { done: false };
}
