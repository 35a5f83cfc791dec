import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand, type JavaInfo } from './java.js';
import { isAlive } from './processes.js';

/**
 * AppCDS (a class-data archive) roughly halves JVM boot on this 2-core box: the registry goes
 * from ~5.7 s to ~3 s and Kafka from ~3.5 s to ~1.9 s when both start together. The first
 * run writes the archive at exit; later runs map it.
 *
 * A broken archive crashes the JVM (SIGBUS) rather than being ignored, so one only becomes
 * current after the JVM that wrote it exited cleanly *and* a test JVM maps it with -Xshare:on;
 * a JVM that dies on its own while using one gets its archive deleted.
 */

export const cdsArchivePath = (dir: string, component: string, fingerprint: string): string =>
  join(dir, `${component}-${fingerprint}.jsa`);

const TMP_MARK = '.tmp-';

/** The pid a temp archive name carries, so leftovers of dead runs can be told apart. */
export function tempArchivePid(name: string): number | null {
  const i = name.lastIndexOf(TMP_MARK);
  if (i === -1) return null;
  const pid = Number.parseInt(name.slice(i + TMP_MARK.length), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * Whether a JVM's own death may be its archive's fault. A damaged archive makes it crash
 * (SIGBUS/SIGSEGV, caught by the JVM, which then aborts or exits non-zero); SIGKILL (the OOM
 * killer, a `kill -9`) or a termination request comes from outside and says nothing about it.
 */
export function exitMayBeArchiveFault(info: { code: number | null; signal: NodeJS.Signals | null }): boolean {
  // A JVM handles SIGHUP, SIGINT and SIGTERM itself and exits with 128 + the signal's number.
  if (info.code !== null && OUTSIDE_REQUEST_EXIT_CODES.has(info.code)) return false;
  return info.signal !== 'SIGKILL' && info.signal !== 'SIGTERM' && info.signal !== 'SIGINT';
}

/** 128 + SIGHUP, SIGINT, SIGTERM: how a JVM exits on a termination request it handled. */
const OUTSIDE_REQUEST_EXIT_CODES = new Set([129, 130, 143]);

export interface CdsPlan {
  /** For the long-running JVM: map the archive, or write one at exit. */
  flags: string[];
  /** For short helper JVMs on the same classpath: map the archive if there is one. */
  readOnlyFlags: string[];
  /** The JVM exited cleanly after our SIGTERM: promote a freshly written archive. */
  commit(): Promise<void>;
  /** We had to kill it: whatever it was writing is incomplete. */
  dropPartial(): Promise<void>;
  /** It died on its own: the archive it used may be the reason. */
  distrust(): Promise<void>;
}

const NO_CDS: CdsPlan = {
  flags: [],
  readOnlyFlags: [],
  commit: async () => undefined,
  dropPartial: async () => undefined,
  distrust: async () => undefined,
};

export async function planCds(opts: {
  enabled: boolean;
  dir: string;
  component: string;
  java: JavaInfo;
  /** Exactly as the JVM gets it: CDS refuses an archive written for another class path. */
  classpath: string;
  log: (line: string) => void;
}): Promise<CdsPlan> {
  if (!opts.enabled) return NO_CDS;
  await mkdir(opts.dir, { recursive: true });
  for (const name of await readdir(opts.dir)) {
    const pid = tempArchivePid(name);
    if (pid !== null && pid !== process.pid && !isAlive(pid)) await rm(join(opts.dir, name), { force: true });
  }
  const archive = cdsArchivePath(opts.dir, opts.component, opts.java.fingerprint);
  if (existsSync(archive)) {
    return {
      flags: [`-XX:SharedArchiveFile=${archive}`],
      readOnlyFlags: [`-XX:SharedArchiveFile=${archive}`],
      commit: async () => undefined,
      dropPartial: async () => undefined,
      distrust: async () => {
        opts.log(`removing the class-data archive ${archive}: the ${opts.component} JVM using it died`);
        await rm(archive, { force: true });
      },
    };
  }
  const temp = `${archive}${TMP_MARK}${process.pid}`;
  const drop = (): Promise<void> => rm(temp, { force: true });
  return {
    flags: [`-XX:ArchiveClassesAtExit=${temp}`],
    readOnlyFlags: [],
    commit: async () => {
      if (!existsSync(temp)) return;
      const check = await runCommand(opts.java.command, ['-Xshare:on', `-XX:SharedArchiveFile=${temp}`, '-cp', opts.classpath, '-version']);
      if (check.code === 0) {
        await rename(temp, archive);
        opts.log(`saved a class-data archive for faster ${opts.component} starts`);
      } else {
        await drop();
      }
    },
    dropPartial: drop,
    distrust: drop,
  };
}
