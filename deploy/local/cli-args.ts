/**
 * The command after `--` (or, without `--`, all arguments). npm and turbo both pass `--`
 * through, so the separator is what keeps the wrapped command's flags out of our hands.
 */
export function commandAfterSeparator(argv: string[]): string[] {
  const i = argv.indexOf('--');
  return i === -1 ? [...argv] : argv.slice(i + 1);
}

/** A shell-like exit status: the code, or 128 + signal number when killed by a signal. */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null, signalNumbers: Record<string, number>): number {
  if (code !== null) return code;
  if (signal !== null) return 128 + (signalNumbers[signal] ?? 0);
  return 1;
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
