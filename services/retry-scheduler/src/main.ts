/**
 * retry-scheduler — skeleton: connects to Kafka and the registry, creates topics, registers schemas,
 * follows the config topic and serves /healthz, /readyz and /metrics on HTTP_PORT.
 */
import { ConfigView, connectInfrastructure, createHttpServer, envTypes, listen, runService, topicDefinitions } from '@tributary/shared';

await runService({
  name: 'retry-scheduler',
  env: { HTTP_PORT: envTypes.port(9103) },
  async start(context) {
    const { env, logger, metrics, readiness, onShutdown } = context;
    readiness.set('config', false);
    const { kafka, codec, topics } = await connectInfrastructure(context, (names) => topicDefinitions(names));
    const config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix: `${env.TOPIC_NAMESPACE}-retry-scheduler` });
    const app = createHttpServer({ logger, metrics, readiness });
    await listen(app, env.HTTP_PORT, env.HTTP_HOST);
    onShutdown('http', () => app.close());
    await config.start();
    onShutdown('config', () => config.stop());
    readiness.set('config', true);
  },
});
