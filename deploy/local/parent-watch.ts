/**
 * Noticing that the npm that started us is gone. npm forwards only SIGINT and SIGTERM to its
 * script, and a shell between npm and node (dash does not exec a script's last command) dies
 * of a signal without passing it on; either way the orchestrator would be orphaned with every
 * service and JVM still running. Polling the parent pid is the portable way to notice: Linux's
 * PR_SET_PDEATHSIG is not reachable from Node, and macOS has nothing like it.
 */

/**
 * Whether this process is `npm run <script>` itself (npm sets npm_lifecycle_event for the
 * script's process tree). Run directly, a changed parent means nothing: a user may well start
 * it under nohup or from a shell they then close on purpose.
 */
export function startedByNpmScript(env: NodeJS.ProcessEnv, script: string): boolean {
  return env['npm_lifecycle_event'] === script;
}

export interface ParentWatchOptions {
  /** `() => process.ppid`, which asks the OS on every read. */
  parentPid: () => number;
  /** Called once, with the pid of the parent that went away. */
  onGone: (formerParent: number) => void;
  intervalMs?: number;
}

/** Calls `onGone` once the parent pid changes (re-parented to init or a subreaper). Returns a stop function. */
export function watchParent(opts: ParentWatchOptions): () => void {
  const original = opts.parentPid();
  const timer = setInterval(() => {
    if (opts.parentPid() === original) return;
    clearInterval(timer);
    opts.onGone(original);
  }, opts.intervalMs ?? 1_000);
  // The watch alone must not keep a finished process alive.
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * What every orchestrator run as `npm run <script>` does: call `onGone` once the process that
 * started it (npm, or the shell npm ran it with) is gone. Run directly, nothing is watched.
 */
export function whenNpmParentGone(script: string, onGone: (formerParent: number) => void, env: NodeJS.ProcessEnv = process.env): void {
  if (startedByNpmScript(env, script)) watchParent({ parentPid: () => process.ppid, onGone });
}
