import { describe, expect, it } from 'vitest';
import { chooseStartStack, externalStackFromEnv, forcedStackKind, withoutCredentials, type StartStackProbes } from './stack-choice.js';

const probes = (javaProblem: string | null, docker: boolean): StartStackProbes & { asked: string[] } => {
  const asked: string[] = [];
  return {
    asked,
    javaProblem: async () => {
      asked.push('java');
      return javaProblem;
    },
    dockerAnswers: async () => {
      asked.push('docker');
      return docker;
    },
  };
};

describe('externalStackFromEnv', () => {
  it('takes both, trimming and splitting the broker list', () => {
    expect(externalStackFromEnv({ KAFKA_BROKERS: ' a:9092, b:9092 ,', SCHEMA_REGISTRY_URL: 'http://r:8081/apis/ccompat/v7/' })).toEqual({
      brokers: ['a:9092', 'b:9092'],
      registryUrl: 'http://r:8081/apis/ccompat/v7',
    });
  });

  it('is null with neither', () => {
    expect(externalStackFromEnv({ KAFKA_BROKERS: ' ' })).toBeNull();
  });

  it.each([
    [{ KAFKA_BROKERS: 'a:9092' }, 'got only KAFKA_BROKERS'],
    [{ SCHEMA_REGISTRY_URL: 'http://r' }, 'got only SCHEMA_REGISTRY_URL'],
  ])('refuses one without the other (%j)', (env, message) => {
    expect(() => externalStackFromEnv(env)).toThrow(message);
  });
});

describe('forcedStackKind', () => {
  it('reads TRIBUTARY_STACK', () => {
    expect(forcedStackKind({ TRIBUTARY_STACK: 'docker' })).toBe('docker');
    expect(forcedStackKind({ TRIBUTARY_STACK: ' local ' })).toBe('local');
    expect(forcedStackKind({})).toBeUndefined();
    expect(() => forcedStackKind({ TRIBUTARY_STACK: 'jvm' })).toThrow('TRIBUTARY_STACK must be "docker" or "local", got "jvm"');
  });
});

describe('chooseStartStack', () => {
  it('uses the environment\'s Kafka and registry without probing anything', async () => {
    const p = probes(null, true);
    const choice = await chooseStartStack({ KAFKA_BROKERS: 'k:9092', SCHEMA_REGISTRY_URL: 'http://r' }, p);
    expect(choice).toEqual({ kind: 'env', endpoints: { brokers: ['k:9092'], registryUrl: 'http://r' } });
    expect(p.asked).toEqual([]);
  });

  it('refuses a lone KAFKA_BROKERS rather than start a stack that overrides it', async () => {
    await expect(chooseStartStack({ KAFKA_BROKERS: 'k:9092' }, probes(null, false))).rejects.toThrow('must be set together');
  });

  it('follows TRIBUTARY_STACK without probing', async () => {
    const p = probes('no java', false);
    expect(await chooseStartStack({ TRIBUTARY_STACK: 'docker' }, p)).toMatchObject({ kind: 'docker' });
    expect(await chooseStartStack({ TRIBUTARY_STACK: 'local' }, p)).toMatchObject({ kind: 'local' });
    expect(p.asked).toEqual([]);
  });

  it('prefers the JVM stack when a JDK 17+ is there, without asking Docker', async () => {
    const p = probes(null, true);
    expect(await chooseStartStack({}, p)).toMatchObject({ kind: 'local' });
    expect(p.asked).toEqual(['java']);
  });

  it('falls back to Docker without a JDK', async () => {
    expect(await chooseStartStack({}, probes('"java" could not be started (ENOENT)', true))).toMatchObject({ kind: 'docker' });
  });

  it('names both ways, and why the JDK one failed, when neither is there', async () => {
    const choice = chooseStartStack({}, probes('"java" is Java 11', false));
    await expect(choice).rejects.toThrow(/JDK 17\+.*"java" is Java 11[\s\S]*Docker: no Docker engine answered/);
  });
});

describe('withoutCredentials', () => {
  it.each([
    ['http://user:secret@registry:8081/apis/ccompat/v7', 'http://***@registry:8081/apis/ccompat/v7'],
    ['https://key@registry.example/', 'https://***@registry.example/'],
    ['http://127.0.0.1:8081/apis/ccompat/v7', 'http://127.0.0.1:8081/apis/ccompat/v7'],
    ['not a url://u:p@x', 'not a url://***@x'],
  ])('%s → %s', (url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});
