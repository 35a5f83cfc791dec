import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import { commandAfterSeparator, exitStatus } from './cli-args.js';
import { resolveCacheDir, findDeployRoot } from './paths.js';

describe('commandAfterSeparator', () => {
  it('takes everything after the first --, keeping later ones for the command', () => {
    expect(commandAfterSeparator(['--', 'turbo', 'run', 'test', '--', '-t', 'x'])).toEqual(['turbo', 'run', 'test', '--', '-t', 'x']);
  });

  it('takes all arguments without a separator', () => {
    expect(commandAfterSeparator(['vitest', 'run'])).toEqual(['vitest', 'run']);
    expect(commandAfterSeparator([])).toEqual([]);
  });
});

describe('exitStatus', () => {
  it('is the code, or 128 + signal like a shell', () => {
    expect(exitStatus(3, null, constants.signals)).toBe(3);
    expect(exitStatus(null, 'SIGINT', constants.signals)).toBe(130);
    expect(exitStatus(null, 'SIGKILL', constants.signals)).toBe(137);
    expect(exitStatus(null, null, constants.signals)).toBe(1);
  });
});

describe('resolveCacheDir', () => {
  it('prefers TRIBUTARY_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache', () => {
    expect(resolveCacheDir({ TRIBUTARY_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x' }, '/h')).toBe('/c');
    expect(resolveCacheDir({ XDG_CACHE_HOME: '/x' }, '/h')).toBe('/x/tributary');
    expect(resolveCacheDir({}, '/h')).toBe('/h/.cache/tributary');
  });
});

describe('findDeployRoot', () => {
  it('walks up to the directory holding local/pom.xml', () => {
    const exists = (p: string): boolean => p === '/repo/deploy/local/pom.xml';
    expect(findDeployRoot('/repo/deploy/dist/local', exists)).toBe('/repo/deploy');
    expect(findDeployRoot('/repo/deploy/local', exists)).toBe('/repo/deploy');
    expect(() => findDeployRoot('/elsewhere', exists)).toThrow(/pom\.xml/);
  });
});
