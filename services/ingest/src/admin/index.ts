/**
 * The admin side of ingest, wired for main.ts in two steps: `mountAdmin` before the server
 * listens (routes can only be added then), `start()` once the config view has caught up
 * (producers, the health table, then the TRIBUTARY_CONFIG apply). Without ADMIN_TOKEN the
 * API answers that it is off; without TRIBUTARY_CONFIG nothing is applied.
 */
import type { Kafka } from 'kafkajs';
import { z } from 'zod';
import type { TopicNames } from '@tributary/schemas';
import {
  adminTokenSetting,
  createProducer,
  DeadLetterStore,
  QuarantineStore,
  envTypes,
  TransactionalOutput,
  untilSuccess,
  type AvroCodec,
  type CommonEnv,
  type ConfigView,
  type HttpServer,
  type Logger,
  type ServiceContext,
} from '@tributary/shared';
import { ConfigStore } from './config-store.js';
import { DestinationHealthTable } from './destination-health.js';
import { AdminQuarantine } from './quarantine.js';
import { AdminDeadLetters } from './dlq.js';
import { AdminEvents } from './events.js';
import { DeliveryLogClient, deliveryLogEnv, deliveryLogRoutes } from './delivery-log.js';
import { loadAdminOpenApi } from './openapi.js';
import { ADMIN_ROUTES, registerAdminApi, registerAdminDisabled } from './plugin.js';
import { ADMIN_PREFIX } from './routes.js';
import { applyConfigFile } from './startup-apply.js';

export const adminEnv = {
  /** Bearer token of the admin API; unset = the admin API is off. */
  ADMIN_TOKEN: adminTokenSetting(),
  /** Declarative config (YAML) applied at start-up; unset = nothing applied. */
  TRIBUTARY_CONFIG: z.string().optional(),
  /** How long an admin request waits for Kafka before answering 503. */
  ADMIN_WRITE_TIMEOUT: envTypes.duration('15s'),
  ...deliveryLogEnv,
};

export type AdminEnv = CommonEnv & z.infer<z.ZodObject<typeof adminEnv>>;

export interface AdminInfrastructure {
  app: HttpServer;
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigView;
}

export interface AdminSide {
  start(): Promise<void>;
}

interface Lifecycle {
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface ApiParts {
  token: string;
  env: AdminEnv;
  infrastructure: AdminInfrastructure;
  store: ConfigStore;
  logger: Logger;
  isReady: () => boolean;
}

/** The routes and what only they need: the transactional producer and the health table. */
function mountApi({ token, env, infrastructure, store, logger, isReady }: ApiParts): Lifecycle {
  const { app, kafka, codec, topics, config } = infrastructure;
  const writer = new TransactionalOutput({ kafka, transactionalId: `${env.TOPIC_NAMESPACE}-ingest-admin-${env.INSTANCE_ID}`, logger });
  const events = new AdminEvents({ writer, kafka, codec, topics, config, logger, timeoutMs: env.ADMIN_WRITE_TIMEOUT, groupPrefix: `${env.TOPIC_NAMESPACE}-ingest-admin` });
  const deadLetters = new AdminDeadLetters({
    store: new DeadLetterStore({ kafka, codec, topics, logger, readTimeoutMs: env.ADMIN_WRITE_TIMEOUT }),
    config,
    timeoutMs: env.ADMIN_WRITE_TIMEOUT,
  });
  const health = new DestinationHealthTable({ kafka, codec, logger, topic: topics.destinationHealth, groupPrefix: `${env.TOPIC_NAMESPACE}-ingest-admin` });
  const quarantine = new AdminQuarantine(new QuarantineStore({ kafka, codec, topics, logger, readTimeoutMs: env.ADMIN_WRITE_TIMEOUT }));
  const deliveryLog = new DeliveryLogClient({ url: env.DELIVERY_LOG_URL, token, timeoutMs: env.DELIVERY_LOG_TIMEOUT });
  registerAdminApi(app, {
    token,
    config: store,
    events,
    deadLetters,
    health,
    quarantine,
    isReady,
    logger,
    openapi: loadAdminOpenApi(),
    routes: [...ADMIN_ROUTES, deliveryLogRoutes(deliveryLog)],
  });
  return {
    async start() {
      await writer.start();
      await health.start();
    },
    async stop() {
      await events.idle();
      await deadLetters.idle();
      await health.stop();
      await writer.stop();
      await deliveryLog.close();
    },
  };
}

export function mountAdmin(context: ServiceContext<AdminEnv>, infrastructure: AdminInfrastructure): AdminSide {
  const { env, logger, onShutdown } = context;
  const { kafka, codec, topics, config } = infrastructure;
  const token = env.ADMIN_TOKEN;
  let ready = false;

  if (!token) {
    logger.info('admin API disabled: ADMIN_TOKEN is not set');
    registerAdminDisabled(infrastructure.app);
  } else {
    logger.info({ prefix: ADMIN_PREFIX }, 'admin API enabled');
    if (token.length < 16) logger.warn('ADMIN_TOKEN is shorter than 16 characters; use a long random token outside tests');
  }
  if (!token && !env.TRIBUTARY_CONFIG) return { start: async () => undefined };

  const configProducer = createProducer(kafka);
  const store = new ConfigStore({ view: config, producer: configProducer, codec, topic: topics.config, logger, timeoutMs: env.ADMIN_WRITE_TIMEOUT });
  const api = token ? mountApi({ token, env, infrastructure, store, logger, isReady: () => ready }) : undefined;

  return {
    async start() {
      // Waited out like every start-up step: with the broker away here ingest used to exit.
      await untilSuccess(() => configProducer.connect(), { logger, doing: 'connecting the config producer', signal: context.signal });
      await api?.start();
      onShutdown('admin', async () => {
        // New requests get 503 while the ones in flight finish.
        ready = false;
        await api?.stop();
        await store.idle();
        await configProducer.disconnect();
      });
      if (env.TRIBUTARY_CONFIG) await applyConfigFile(env.TRIBUTARY_CONFIG, store, logger);
      ready = true;
    },
  };
}
