/**
 * The record of which JVMs a stack started, so the next start can clean up after an
 * orchestrator that died without stopping them (kill -9, a crashed test runner).
 */

export interface RecordedProcess {
  name: string;
  pid: number;
  /** A string unique to this stack on the process's command line; guards against pid reuse. */
  marker: string;
}

export interface PidFile {
  /** The orchestrator that owns the processes; while it lives they are not stale. */
  owner: number;
  processes: RecordedProcess[];
}

export function renderPidFile(p: PidFile): string {
  return `${JSON.stringify(p, null, 2)}\n`;
}

export function parsePidFile(text: string): PidFile | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const { owner, processes } = raw as { owner?: unknown; processes?: unknown };
  if (!isPid(owner) || !Array.isArray(processes)) return null;
  const parsed: RecordedProcess[] = [];
  for (const p of processes as unknown[]) {
    if (typeof p !== 'object' || p === null) return null;
    const { name, pid, marker } = p as { name?: unknown; pid?: unknown; marker?: unknown };
    if (typeof name !== 'string' || !isPid(pid) || typeof marker !== 'string' || marker === '') return null;
    parsed.push({ name, pid, marker });
  }
  return { owner, processes: parsed };
}

function isPid(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 1;
}

/** /proc/<pid>/cmdline separates arguments with NUL; `ps` with spaces. Both are accepted. */
export function commandLineHasMarker(cmdline: string, marker: string): boolean {
  return cmdline.split('\0').join(' ').includes(marker);
}

/** The `-D` flag that puts the marker on a JVM's command line. */
export const markerFlag = (dataDir: string): string => `-Dtributary.stack=${dataDir}`;
