/**
 * Which Kafka + registry a run uses. Shared rules: KAFKA_BROKERS and SCHEMA_REGISTRY_URL come
 * together or not at all, and TRIBUTARY_STACK=local|docker skips the detection. The order of
 * detection differs: the tests prefer Docker (acquire.ts); `npm start` prefers the JVM stack,
 * whose data is kept across runs. Pure but for the injected probes.
 */
import type { StackEndpoints } from './stack.js';

export type StackKind = 'local' | 'docker';

/** KAFKA_BROKERS + SCHEMA_REGISTRY_URL from the environment; one without the other is an error. */
export function externalStackFromEnv(env: NodeJS.ProcessEnv): StackEndpoints | null {
  const brokers = env['KAFKA_BROKERS']?.trim();
  const registryUrl = env['SCHEMA_REGISTRY_URL']?.trim();
  if (!brokers && !registryUrl) return null;
  if (!brokers || !registryUrl) {
    // Starting a private stack while one of them points elsewhere would use the wrong thing.
    throw new Error(
      `KAFKA_BROKERS and SCHEMA_REGISTRY_URL must be set together (got only ${brokers ? 'KAFKA_BROKERS' : 'SCHEMA_REGISTRY_URL'}); ` +
        'set both to use your own Kafka and registry, or neither to have one started',
    );
  }
  const list = brokers
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  return { brokers: list, registryUrl: registryUrl.replace(/\/+$/, '') };
}

/** TRIBUTARY_STACK, when set. */
export function forcedStackKind(env: NodeJS.ProcessEnv): StackKind | undefined {
  const forced = env['TRIBUTARY_STACK']?.trim();
  if (!forced) return undefined;
  if (forced !== 'docker' && forced !== 'local') throw new Error(`TRIBUTARY_STACK must be "docker" or "local", got "${forced}"`);
  return forced;
}

export type StartStackChoice =
  | { kind: 'env'; endpoints: StackEndpoints }
  | { kind: StackKind; why: string };

export interface StartStackProbes {
  /** Why the JVM stack cannot run (no JDK 17+, or no Maven for a first run), or null when it can. */
  javaProblem(): Promise<string | null>;
  dockerAnswers(): Promise<boolean>;
}

/**
 * `npm start`'s stack: the environment's; else TRIBUTARY_STACK; else the JVM stack when a JDK
 * 17+ is found; else Docker when an engine answers; else an error naming both ways.
 */
export async function chooseStartStack(env: NodeJS.ProcessEnv, probes: StartStackProbes): Promise<StartStackChoice> {
  const endpoints = externalStackFromEnv(env);
  if (endpoints) return { kind: 'env', endpoints };
  const forced = forcedStackKind(env);
  if (forced) return { kind: forced, why: `TRIBUTARY_STACK=${forced}` };
  const javaProblem = await probes.javaProblem();
  if (javaProblem === null) return { kind: 'local', why: 'a JDK 17+ is installed' };
  if (await probes.dockerAnswers()) return { kind: 'docker', why: `the JVM stack cannot run (${javaProblem}), and a Docker engine answers` };
  throw new Error(
    'npm start needs one of two ways to run Kafka and the schema registry, and neither is available:\n' +
      `  - a JDK 17+ (plus Maven for the first run): ${javaProblem}\n` +
      '  - Docker: no Docker engine answered (is the daemon running, and may this user use it?)\n' +
      'Or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL to a Kafka and registry of your own.',
  );
}

/** A URL fit to print: `user:password@` would put a registry's credentials in terminals and CI logs. */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL the services could use either; still never echo what looks like userinfo.
    return url.replace(/\/\/[^/@]*@/, '//***@');
  }
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '***';
  parsed.password = '';
  // URL adds a "/" path to a bare origin; show the URL as it was written.
  return parsed.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}
