import { describe, expect, it } from 'vitest';
import { commandLineHasMarker, markerFlag, parsePidFile, renderPidFile } from './pidfile.js';

describe('pid file', () => {
  it('round-trips', () => {
    const file = { owner: 4242, processes: [{ name: 'kafka', pid: 100, marker: '-Dtributary.stack=/d' }] };
    expect(parsePidFile(renderPidFile(file))).toEqual(file);
  });

  it.each([
    ['not json', '{'],
    ['no owner', '{"processes":[]}'],
    ['pid 1 (never ours to kill)', '{"owner":10,"processes":[{"name":"k","pid":1,"marker":"m"}]}'],
    ['empty marker', '{"owner":10,"processes":[{"name":"k","pid":5,"marker":""}]}'],
    ['fractional pid', '{"owner":10.5,"processes":[]}'],
  ])('rejects %s', (_label, text) => {
    expect(parsePidFile(text)).toBeNull();
  });
});

describe('commandLineHasMarker', () => {
  const marker = markerFlag('/home/u/.tributary/data');

  it('matches /proc cmdline with NUL separators', () => {
    expect(commandLineHasMarker(['java', marker, '-cp', 'lib/*', 'kafka.Kafka'].join('\0'), marker)).toBe(true);
  });

  it('matches ps output', () => {
    expect(commandLineHasMarker(`java ${marker} -jar x.jar`, marker)).toBe(true);
  });

  it('does not match another stack or an unrelated process', () => {
    expect(commandLineHasMarker(`java ${markerFlag('/tmp/other')} -jar x.jar`, marker)).toBe(false);
    expect(commandLineHasMarker('bash', marker)).toBe(false);
  });
});
