/**
 * Where `--profile=<service>` runs leave their `.cpuprofile` files, and how a run finds the one
 * its profiled service wrote (V8 names it after the process id when the process exits).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../harness/services.js';
import { summariseProfile, type CpuProfile, type ProfileSummary } from './cpu-profile.js';

export const PROFILE_DIR = join(REPO_ROOT, 'test', 'bench', 'results', 'profiles');

/** Node's flags for a profiled service. */
export const profilingArgs = (): string[] => ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`];

/**
 * V8 stamps a profile's samples with the system's monotonic clock, the one `process.hrtime`
 * reads: a window taken with this in the harness cuts the profile at the same moments.
 */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/** The newest profile the process with this id wrote, with its path, or undefined. */
export async function readProfileOf(pid: number | undefined): Promise<{ file: string; profile: CpuProfile } | undefined> {
  if (pid === undefined) return undefined;
  const names = await readdir(PROFILE_DIR).catch(() => [] as string[]);
  const name = names.filter((n) => n.endsWith('.cpuprofile') && n.includes(`.${pid}.`)).sort().pop();
  if (!name) return undefined;
  const file = join(PROFILE_DIR, name);
  return { file, profile: JSON.parse(await readFile(file, 'utf8')) as CpuProfile };
}

/** A profile's summary between two `monotonicMicros()` readings, with the window in µs since the profile's start. */
export function windowedProfile(profile: CpuProfile, [from, to]: [number, number], top: number): { windowMicros: [number, number]; summary: ProfileSummary } {
  const windowMicros: [number, number] = [from - profile.startTime, to - profile.startTime];
  return { windowMicros, summary: summariseProfile(profile, { fromUs: windowMicros[0], toUs: windowMicros[1], top }) };
}
