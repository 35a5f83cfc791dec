import { describe, expect, it } from 'vitest';
import { cdsArchivePath, exitMayBeArchiveFault, tempArchivePid } from './cds.js';
import { javaFingerprint } from './java.js';

describe('class-data archive naming', () => {
  it('keys archives by component and JVM build', () => {
    const a = javaFingerprint('/usr/bin/java', 'openjdk version "17.0.15" 2025-04-15');
    const b = javaFingerprint('/usr/bin/java', 'openjdk version "17.0.16" 2025-07-15');
    const c = javaFingerprint('/opt/jdk/bin/java', 'openjdk version "17.0.15" 2025-04-15');
    expect(a).toMatch(/^[0-9a-f]{10}$/);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(javaFingerprint('/usr/bin/java', 'openjdk version "17.0.15" 2025-04-15\n')).toBe(a);
    expect(cdsArchivePath('/cache/dist/kafka-3.9.1/cds', 'kafka', a)).toBe(`/cache/dist/kafka-3.9.1/cds/kafka-${a}.jsa`);
  });

  it('reads the writer pid from a temp archive name and nothing else', () => {
    expect(tempArchivePid('kafka-0123456789.jsa.tmp-4242')).toBe(4242);
    expect(tempArchivePid('kafka-0123456789.jsa')).toBeNull();
    expect(tempArchivePid('kafka.jsa.tmp-x')).toBeNull();
  });
});

describe('exitMayBeArchiveFault', () => {
  it('suspects the archive of a JVM that crashed or exited on its own, not of one killed from outside', () => {
    expect(exitMayBeArchiveFault({ code: 134, signal: null })).toBe(true);
    expect(exitMayBeArchiveFault({ code: null, signal: 'SIGBUS' })).toBe(true);
    expect(exitMayBeArchiveFault({ code: 1, signal: null })).toBe(true);
    expect(exitMayBeArchiveFault({ code: null, signal: 'SIGKILL' })).toBe(false);
    expect(exitMayBeArchiveFault({ code: null, signal: 'SIGTERM' })).toBe(false);
    // A JVM handles a termination request itself and exits with 128 + its number.
    expect(exitMayBeArchiveFault({ code: 143, signal: null })).toBe(false);
    expect(exitMayBeArchiveFault({ code: 130, signal: null })).toBe(false);
    expect(exitMayBeArchiveFault({ code: 129, signal: null })).toBe(false);
  });
});
