import { describe, expect, it } from 'vitest';
import { LinePrefixer, prefixesFor } from './lines.js';

describe('LinePrefixer', () => {
  it('prefixes whole lines across chunk boundaries', () => {
    const out: string[] = [];
    const p = new LinePrefixer('[router] ', (l) => out.push(l));
    p.push('{"msg":"sta');
    p.push('rted"}\n{"msg":"b"}\r\npart');
    expect(out).toEqual(['[router] {"msg":"started"}\n', '[router] {"msg":"b"}\n']);
    p.push('ial\n');
    expect(out.at(-1)).toBe('[router] partial\n');
  });

  it('flushes an unterminated last line once', () => {
    const out: string[] = [];
    const p = new LinePrefixer('> ', (l) => out.push(l));
    p.push('no newline');
    p.flush();
    p.flush();
    expect(out).toEqual(['> no newline\n']);
  });
});

describe('prefixesFor', () => {
  it('pads names to one width', () => {
    const p = prefixesFor(['ingest', 'retry-scheduler']);
    expect(p.get('ingest')).toBe('[ingest]          ');
    expect(p.get('retry-scheduler')).toBe('[retry-scheduler] ');
  });
});
