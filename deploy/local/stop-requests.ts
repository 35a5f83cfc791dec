/**
 * How an orchestrator counts stop requests (SIGINT, SIGTERM, SIGHUP): the first starts an
 * orderly shutdown, a later one forces it. Under `npm start` a single Ctrl-C arrives twice —
 * the terminal signals its whole foreground process group, npm and us, and npm passes its copy
 * on to its script — so a repeat within a moment of the first is the same request, not an
 * impatient second one. Pure but for the clock.
 */
export const SAME_REQUEST_WITHIN_MS = 1_000;

export type StopRequest = 'first' | 'duplicate' | 'force';

export function stopRequestCounter(now: () => number = Date.now): () => StopRequest {
  let firstAt: number | undefined;
  return () => {
    const t = now();
    if (firstAt === undefined) {
      firstAt = t;
      return 'first';
    }
    return t - firstAt < SAME_REQUEST_WITHIN_MS ? 'duplicate' : 'force';
  };
}
