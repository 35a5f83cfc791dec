import { describe, expect, it } from 'vitest';
import { jvmRole, parseCpuTicks, parseStatusKb } from './proc.js';

describe('/proc parsing', () => {
  it('reads utime and stime after a command name with spaces and parentheses', () => {
    const stat = '4242 (node (worker) x) S 1 4242 4242 0 -1 4194304 5210 0 0 0 1234 567 0 0 20 0 11 0 8850 1179648000 60000';
    expect(parseCpuTicks(stat)).toEqual({ user: 1234, system: 567 });
  });

  it('refuses a line it cannot read', () => {
    expect(() => parseCpuTicks('garbage')).toThrow(/unreadable/);
  });

  it('reads a kB field of /proc/<pid>/status in bytes', () => {
    const status = 'Name:\tjava\nVmPeak:\t 5000000 kB\nVmHWM:\t  750976 kB\nVmRSS:\t  700000 kB\n';
    expect(parseStatusKb(status, 'VmHWM')).toBe(750976 * 1024);
    expect(parseStatusKb(status, 'VmSwap')).toBeUndefined();
  });

  it("recognises the stack's JVMs by command line", () => {
    expect(jvmRole('java -Xmx512m -cp /cache/kafka-3.9.1/lib/* kafka.Kafka /data/config/server.properties')).toBe('kafka');
    expect(jvmRole('/usr/lib/jvm/bin/java -Dx=1 -jar /cache/apicurio-3.0.9/apicurio-registry-app-3.0.9-runner.jar')).toBe('registry');
    expect(jvmRole('node services/router/dist/main.js kafka.Kafka')).toBeUndefined();
    expect(jvmRole('java -jar something-else.jar')).toBeUndefined();
  });
});
