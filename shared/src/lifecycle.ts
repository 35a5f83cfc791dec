/**
 * How every service starts and stops. `runService` loads and validates settings, builds
 * the logger, metrics and readiness, runs the service's `start`, and on SIGTERM/SIGINT
 * runs the registered shutdown steps in reverse order of registration — so a service
 * that registers "close HTTP", then "producer", then "consumer" stops fetching first,
 * lets in-flight work finish and commit, and disconnects last. A second signal, or a
 * shutdown slower than SHUTDOWN_TIMEOUT, exits at once with a non-zero status. A start that
 * fails on invalid settings or an invalid config file exits with status 2, anything else with 1.
 */
import type { z } from 'zod';
import { ConfigFileError } from './config-file.js';
import { commonEnv, EnvError, loadEnv, type CommonEnv, type EnvShape } from './env.js';
import { createReadiness, type Readiness } from './http.js';
import { createLogger, flushLogger, type Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';

export interface ServiceContext<E> {
  name: string;
  env: E;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  /** Aborted when shutdown begins; long waits should listen to it. */
  signal: AbortSignal;
  /** Registers a step run at shutdown; steps run last-registered first. */
  onShutdown(label: string, step: () => Promise<void> | void): void;
}

export type ServiceEnv<S extends EnvShape> = CommonEnv & z.infer<z.ZodObject<S>>;

export interface ServiceDefinition<S extends EnvShape> {
  name: string;
  /** Variables this service reads beyond `commonEnv`. */
  env: S;
  start(context: ServiceContext<ServiceEnv<S>>): Promise<void>;
}

/** Loads common and service settings together, so one message names every problem. */
export function loadServiceEnv<S extends EnvShape>(shape: S, source: Record<string, string | undefined> = process.env): ServiceEnv<S> {
  const problems: string[] = [];
  let common: CommonEnv | undefined;
  let own: z.infer<z.ZodObject<S>> | undefined;
  try {
    common = loadEnv(commonEnv, source);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    problems.push(...error.problems);
  }
  try {
    own = loadEnv(shape, source);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    problems.push(...error.problems);
  }
  if (!common || !own) throw new EnvError(problems);
  return { ...common, ...own };
}

type Step = { label: string; run: () => Promise<void> | void };

/**
 * The exit status of a service that could not start because of what it was given — invalid
 * settings in the environment, or a TRIBUTARY_CONFIG file that cannot be read or is refused.
 * Restarting cannot fix either, so supervisors (npm start's restart policy) stop on this code
 * instead of restarting the service for ever.
 */
export const INVALID_SETTINGS_EXIT_CODE = 2;

/** One rule for every way start-up can fail: the user's input → 2, anything else (Kafka away, a bug) → 1. */
export function startFailureExitCode(error: unknown): number {
  return error instanceof EnvError || error instanceof ConfigFileError ? INVALID_SETTINGS_EXIT_CODE : 1;
}

export async function runService<S extends EnvShape>(definition: ServiceDefinition<S>): Promise<void> {
  let env: ServiceEnv<S>;
  try {
    env = loadServiceEnv(definition.env);
  } catch (error) {
    if (error instanceof EnvError) {
      process.stderr.write(`[${definition.name}] ${error.message}\n`);
      process.exit(startFailureExitCode(error));
    }
    throw error;
  }

  const logger = createLogger({ service: definition.name, level: env.LOG_LEVEL });
  const metrics = createMetrics(definition.name);
  const readiness = createReadiness();
  const controller = new AbortController();
  const steps: Step[] = [];
  let stopping: Promise<void> | undefined;

  const shutdown = (reason: string, exitCode: number): Promise<void> => {
    if (stopping) return stopping;
    controller.abort();
    readiness.set('running', false);
    logger.info({ reason }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: env.SHUTDOWN_TIMEOUT }, 'shutdown timed out; exiting');
      flushLogger(logger);
      process.exit(1);
    }, env.SHUTDOWN_TIMEOUT);
    timer.unref();
    stopping = (async () => {
      let code = exitCode;
      for (const step of steps.slice().reverse()) {
        try {
          await step.run();
          logger.debug({ step: step.label }, 'shutdown step done');
        } catch (error) {
          code = code || 1;
          logger.error({ err: error, step: step.label }, 'shutdown step failed');
        }
      }
      logger.info({ exitCode: code }, 'stopped');
      flushLogger(logger);
      process.exit(code);
    })();
    return stopping;
  };

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        logger.warn({ signal }, 'second signal; exiting now');
        flushLogger(logger);
        process.exit(130);
      }
      void shutdown(signal, 0);
    });
  }
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (error) => {
    logger.fatal({ err: error }, 'unhandled rejection');
    void shutdown('unhandledRejection', 1);
  });

  readiness.set('running', true);
  const context: ServiceContext<typeof env> = {
    name: definition.name,
    env,
    logger,
    metrics,
    readiness,
    signal: controller.signal,
    onShutdown: (label, run) => void steps.push({ label, run }),
  };
  try {
    await definition.start(context);
    logger.info('started');
  } catch (error) {
    logger.fatal({ err: error }, 'failed to start');
    await shutdown('start failed', startFailureExitCode(error));
  }
}
