/**
 * Settings from the environment, validated with zod. Every service declares the variables
 * it reads as a zod shape; `loadEnv` either returns typed settings or throws an
 * `EnvError` naming each bad or missing variable, which `runService` prints before exiting.
 * zod was chosen over hand-written checks because it gives typed output, coercion and
 * precise per-field messages from one declaration.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { parseDuration } from './duration.js';

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

export type EnvShape = Record<string, z.ZodType>;

export function loadEnv<S extends EnvShape>(
  shape: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  // Empty strings count as unset, so `FOO= npm start` falls back to the default.
  const input: Record<string, string> = {};
  for (const key of Object.keys(shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const result = z.object(shape).safeParse(input);
  if (result.success) return result.data;
  throw new EnvError(
    result.error.issues.map((issue) => {
      const name = issue.path.join('.') || '(environment)';
      const given = input[String(issue.path[0])];
      const detail = issue.code === 'invalid_type' && given === undefined ? 'is required but not set' : issue.message;
      return `${name}: ${detail}`;
    }),
  );
}

/** Reusable field types for env shapes. */
export const envTypes = {
  duration: (fallback?: string) => {
    const base = z.string().transform((text, ctx) => {
      try {
        return parseDuration(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
    return fallback === undefined ? base : base.prefault(fallback);
  },
  durationList: (fallback?: string) => {
    const base = z.string().transform((text, ctx) => {
      const items = text.split(',').map((part) => part.trim()).filter(Boolean);
      if (items.length === 0) {
        ctx.addIssue({ code: 'custom', message: 'needs at least one duration, e.g. 10s,1m,5m' });
        return z.NEVER;
      }
      try {
        return items.map(parseDuration);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
    return fallback === undefined ? base : base.prefault(fallback);
  },
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
      .transform((value) => value === 'true' || value === '1' || value === 'yes')
      .prefault(fallback ? 'true' : 'false'),
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  /** 0 or more; 0 usually turns the feature off. */
  nonNegativeInt: (fallback: number) => z.coerce.number().int().nonnegative().default(fallback),
  /** A CPU niceness: 0 (as started) to 19 (the lowest priority); see `lowerPriority`. */
  nice: (fallback: number) => z.coerce.number().int().min(0).max(19).default(fallback),
  /** A share above 0 and at most 1, e.g. 0.5. */
  ratio: (fallback: number) => z.coerce.number().gt(0, { message: 'must be above 0' }).max(1, { message: 'must be at most 1' }).default(fallback),
  url: () => z.url({ message: 'must be an absolute URL, e.g. http://127.0.0.1:8081' }),
  list: (fallback?: string) => {
    const base = z
      .string()
      .transform((text) => text.split(',').map((part) => part.trim()).filter(Boolean))
      .refine((items) => items.length > 0, { message: 'needs at least one entry' });
    return fallback === undefined ? base : base.prefault(fallback);
  },
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/** Settings every service reads: Kafka, the registry, logging and the ops HTTP port. */
export const commonEnv = {
  KAFKA_BROKERS: envTypes.list(),
  /** Prefix of every topic and consumer group; lets several pipelines share a cluster. */
  TOPIC_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be 1-63 lower-case letters, digits, "_" or "-"')
    .prefault('tributary'),
  SCHEMA_REGISTRY_URL: envTypes.url(),
  KAFKA_CLIENT_ID: z.string().optional(),
  /** Partitions for topics this service creates; unset = the broker's num.partitions. */
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().positive().optional(),
  /** Replication factor for created topics; unset = the broker's default.replication.factor. */
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().positive().optional(),
  LOG_LEVEL: envTypes.logLevel(),
  /**
   * This process's stable identity, part of its Kafka transactional ids. It must survive a
   * restart (so the new process fences the crashed one's open transaction at once instead of
   * leaving read_committed consumers stalled until it times out) and differ between replicas:
   * the host name — the pod name on Kubernetes — does both.
   */
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'must be 1-128 letters, digits, "_", "." or "-"')
    .prefault(hostname()),
  /** Interface the HTTP server binds: 0.0.0.0 in containers; npm start and tests use 127.0.0.1. */
  HTTP_HOST: z.string().min(1).prefault('0.0.0.0'),
  SHUTDOWN_TIMEOUT: envTypes.duration('30s'),
};

export type CommonEnv = z.infer<z.ZodObject<typeof commonEnv>>;
