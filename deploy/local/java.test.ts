import { describe, expect, it } from 'vitest';
import { javaCommand, parseJavaMajor } from './java.js';

describe('parseJavaMajor', () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['openjdk version "22-ea" 2024-03-19', 22],
    ['java version "1.8.0_292"\nJava(TM) SE Runtime Environment', 8],
    ['openjdk version "11.0.2" 2019-01-15', 11],
    ['Picked up JAVA_TOOL_OPTIONS: -Xss2m\nopenjdk version "25" 2025-09-16', 25],
  ])('%s → %i', (output, major) => {
    expect(parseJavaMajor(output)).toBe(major);
  });

  it('returns null for output it does not understand', () => {
    expect(parseJavaMajor('bash: java: command not found')).toBeNull();
  });
});

describe('javaCommand', () => {
  it('prefers JAVA_HOME when it holds a java binary', () => {
    expect(javaCommand({ JAVA_HOME: '/opt/jdk' }, (p) => p === '/opt/jdk/bin/java')).toBe('/opt/jdk/bin/java');
  });

  it('falls back to PATH without JAVA_HOME or with a broken one', () => {
    expect(javaCommand({}, () => true)).toBe('java');
    expect(javaCommand({ JAVA_HOME: '/nope' }, () => false)).toBe('java');
  });
});
