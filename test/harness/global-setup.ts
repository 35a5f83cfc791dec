/**
 * Acquires the real Kafka broker and schema registry for integration tests:
 * KAFKA_BROKERS / SCHEMA_REGISTRY_URL when set (root `npm test` sets them), else
 * testcontainers when a Docker engine answers, else the local JVM stack. If none can be
 * had the run fails here, loudly: integration tests never skip.
 */
import type { TestProject } from 'vitest/node';
import { acquireStack } from '@tributary/deploy/acquire';
import './provided.js';

let stop: (() => Promise<void>) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const stack = await acquireStack({ log: (line: string) => process.stderr.write(`[stack] ${line}\n`) });
  stop = () => stack.stop();
  project.provide('kafkaBrokers', stack.brokers);
  project.provide('schemaRegistryUrl', stack.registryUrl);
}

export async function teardown(): Promise<void> {
  await stop?.();
}
