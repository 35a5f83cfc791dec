import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pomPath } from './paths.js';
import {
  apicurioInstallKey,
  compareVersions,
  kafkaInstallKey,
  kafkaMavenOverrides,
  parsePomProperties,
  resolveVersions,
} from './versions.js';

const pomProps = parsePomProperties(readFileSync(pomPath, 'utf8'));

describe('parsePomProperties', () => {
  it('reads literal properties and ignores commented-out ones', () => {
    const xml = `<project><properties>
      <!-- <kafka.version>0.0.1</kafka.version> -->
      <kafka.version>3.9.1</kafka.version>
      <x.dir>\${project.build.directory}/x</x.dir>
    </properties><dependencies><version>9</version></dependencies></project>`;
    const props = parsePomProperties(xml);
    expect(props.get('kafka.version')).toBe('3.9.1');
    expect(props.get('x.dir')).toBe('${project.build.directory}/x');
    expect(props.has('version')).toBe(false);
  });

  it('finds the pins of the real pom', () => {
    expect(pomProps.get('kafka.version')).toMatch(/^3\.9\.\d+$/);
    expect(pomProps.get('apicurio.version')).toMatch(/^3\./);
  });
});

describe('resolveVersions', () => {
  it('uses the pom pins and the log4j1 binding for Kafka 3', () => {
    const v = resolveVersions(pomProps, {});
    expect(v.kafka.version).toBe(pomProps.get('kafka.version'));
    expect(v.kafka.logging).toBe('log4j1');
    expect(v.kafka.binding.artifactId).toBe('slf4j-reload4j');
  });

  it('switches binding and logging for a Kafka 4 override', () => {
    const v = resolveVersions(pomProps, { TRIBUTARY_KAFKA_VERSION: '4.1.1' });
    expect(v.kafka.version).toBe('4.1.1');
    expect(v.kafka.logging).toBe('log4j2');
    expect(v.kafka.binding).toMatchObject({ groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j-impl' });
    expect(kafkaMavenOverrides(v.kafka)).toContain('-Dkafka.version=4.1.1');
    expect(kafkaMavenOverrides(v.kafka)).toContain('-Dslf4j.binding.artifactId=log4j-slf4j-impl');
  });

  it('rejects a malformed override instead of asking Maven for it', () => {
    expect(() => resolveVersions(pomProps, { TRIBUTARY_KAFKA_VERSION: 'latest' })).toThrow(/TRIBUTARY_KAFKA_VERSION/);
  });

  it('names a missing property', () => {
    expect(() => resolveVersions(new Map([['kafka.version', '3.9.1']]))).toThrow(/scala\.binary\.version|log4j2|slf4j/);
  });
});

describe('install keys', () => {
  it('change with anything that changes the installed bytes', () => {
    const a = resolveVersions(pomProps, {});
    const b = resolveVersions(pomProps, { TRIBUTARY_KAFKA_VERSION: '3.9.2' });
    expect(kafkaInstallKey(a.kafka)).not.toBe(kafkaInstallKey(b.kafka));
    const otherBinding = { ...a.kafka, binding: { ...a.kafka.binding, version: '1.7.99' } };
    expect(kafkaInstallKey(otherBinding)).not.toBe(kafkaInstallKey(a.kafka));
    expect(apicurioInstallKey({ version: '3.0.9', archiveType: 'zip' })).not.toBe(
      apicurioInstallKey({ version: '3.0.9', archiveType: 'tar.gz' }),
    );
  });
});

describe('compareVersions', () => {
  it('compares numerically, not as text', () => {
    expect(compareVersions('3.10.0', '3.9.1')).toBe(1);
    expect(compareVersions('3.9.1', '4.1.1')).toBe(-1);
    expect(compareVersions('3.9', '3.9.0')).toBe(0);
  });
});
