import { describe, expect, it } from 'vitest';
import { execForm, isIgnored, parseCopy, parseDockerfile, parseDockerignore, stagesOf } from './dockerfile.js';

describe('parseDockerfile', () => {
  it('joins continuation lines, skips comments and blank lines, keeps the first line number', () => {
    const text = ['# syntax=docker/dockerfile:1', 'FROM node:20 AS build', '', 'RUN a \\', '  # a comment inside a continuation is dropped', '', ' && b', 'copy . .'].join('\n');
    expect(parseDockerfile(text)).toEqual([
      { keyword: 'FROM', args: 'node:20 AS build', line: 2 },
      { keyword: 'RUN', args: 'a && b', line: 4 },
      { keyword: 'COPY', args: '. .', line: 8 },
    ]);
  });

  it('splits stages with their names', () => {
    const stages = stagesOf(parseDockerfile('ARG X=1\nFROM a AS one\nRUN x\nFROM b\nCMD ["y"]'));
    expect(stages.map((s) => [s.image, s.name, s.instructions.map((i) => i.keyword)])).toEqual([
      ['a', 'one', ['RUN']],
      ['b', undefined, ['CMD']],
    ]);
  });
});

describe('parseCopy', () => {
  it('reads flags, sources and destination in shell and JSON form', () => {
    expect(parseCopy({ keyword: 'COPY', args: '--from=build --chown=1:1 /out/ ./', line: 3 })).toEqual({
      from: 'build',
      sources: ['/out/'],
      destination: './',
      line: 3,
    });
    expect(parseCopy({ keyword: 'COPY', args: '["a b", "c", "/d/"]', line: 1 })).toEqual({ sources: ['a b', 'c'], destination: '/d/', line: 1 });
    expect(() => parseCopy({ keyword: 'COPY', args: 'only-one', line: 9 })).toThrow(/line 9/);
  });
});

describe('execForm', () => {
  it('returns the argv of the JSON form and refuses the shell form, which would not get signals', () => {
    expect(execForm({ keyword: 'CMD', args: '["node", "main.js"]', line: 1 })).toEqual(['node', 'main.js']);
    expect(() => execForm({ keyword: 'CMD', args: 'node main.js', line: 2 })).toThrow(/exec \(JSON\) form/);
  });
});

describe('isIgnored', () => {
  const rules = parseDockerignore(['# comment', '.git', '**/node_modules', '**/dist', '*.log', 'docs/**', '!docs/keep.md', '/build/'].join('\n'));

  it('excludes matches and everything below a matching directory', () => {
    expect(isIgnored('.git/HEAD', rules)).toBe(true);
    expect(isIgnored('node_modules/x/index.js', rules)).toBe(true);
    expect(isIgnored('services/ingest/node_modules/a', rules)).toBe(true);
    expect(isIgnored('shared/dist/index.js', rules)).toBe(true);
    expect(isIgnored('build/out.txt', rules)).toBe(true);
    expect(isIgnored('docs/a/b.md', rules)).toBe(true);
  });

  it('keeps non-matches, single-star patterns within one directory, and re-included paths', () => {
    expect(isIgnored('package.json', rules)).toBe(false);
    expect(isIgnored('npm.log', rules)).toBe(true);
    expect(isIgnored('logs/npm.log', rules)).toBe(false);
    expect(isIgnored('shared/src/distance.ts', rules)).toBe(false);
    expect(isIgnored('docs/keep.md', rules)).toBe(false);
    expect(isIgnored('./schemas/avro/ingest.avsc', rules)).toBe(false);
  });
});
