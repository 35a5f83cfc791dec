import { createServer } from 'node:net';
import { newClusterId, singleNodeSettings, toKafkaImageEnv } from './kafka-config.js';
import { kafkaAnswers } from './readiness.js';
import { CCOMPAT_PATH } from './registry-config.js';
import type { RunningStack } from './stack.js';
import type { PinnedVersions } from './versions.js';

/** testcontainers is heavy and only needed when a Docker engine exists; load it lazily. */
type Testcontainers = typeof import('testcontainers');
const loadTestcontainers = (): Promise<Testcontainers> => import('testcontainers');

/**
 * Whether a container runtime answers, within `timeoutMs`. testcontainers probes every
 * strategy (env, socket, rootless…); without a deadline a dead daemon socket could hang it.
 */
export async function dockerAvailable(timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await loadTestcontainers();
    const probe = getContainerRuntimeClient().then(
      () => true,
      () => false,
    );
    const deadline = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([probe, deadline]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** A host port free right now; the broker must advertise it before the container starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

/**
 * The official apache/kafka image in KRaft mode and the matching Apicurio image, at the same
 * versions the JVM stack pins. The registry uses its in-memory store here: both containers
 * live and die together, so schema ids cannot outlive the records (or vice versa) and no
 * network between them is needed.
 */
export async function startDockerStack(versions: PinnedVersions, log: (line: string) => void): Promise<RunningStack> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await loadTestcontainers();
  const client = await getContainerRuntimeClient();
  const host = client.info.containerRuntime.host;
  const hostPort = await freePort();

  const settings: Record<string, string> = {
    ...singleNodeSettings(),
    'controller.quorum.voters': '1@localhost:9093',
    // EXTERNAL is what clients on the host use, advertised with the host-mapped port; the
    // broker talks to itself over INTERNAL inside the container.
    listeners: 'EXTERNAL://0.0.0.0:9092,INTERNAL://0.0.0.0:19092,CONTROLLER://0.0.0.0:9093',
    'advertised.listeners': `EXTERNAL://${host}:${hostPort},INTERNAL://localhost:19092`,
    'listener.security.protocol.map': 'EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name': 'INTERNAL',
    // With any KAFKA_* variable set the image ignores its bundled defaults, log.dirs included.
    'log.dirs': '/tmp/kraft-combined-logs',
  };
  const kafkaImage = `apache/kafka:${versions.kafka.version}`;
  const registryImage = `apicurio/apicurio-registry:${versions.apicurio.version}`;
  log(`starting ${kafkaImage} and ${registryImage} with Docker`);

  const kafkaContainer = new GenericContainer(kafkaImage)
    .withEnvironment({ ...toKafkaImageEnv(settings), CLUSTER_ID: newClusterId() })
    .withExposedPorts({ container: 9092, host: hostPort })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(120_000)
    .start();
  const registryContainer = new GenericContainer(registryImage)
    .withEnvironment({ APICURIO_CCOMPAT_LEGACY_ID_MODE_ENABLED: 'false', JAVA_OPTS_APPEND: '-Xmx512m' })
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp(`${CCOMPAT_PATH}/subjects`, 8080).forStatusCode(200))
    .withStartupTimeout(120_000)
    .start();
  const [kafkaResult, registryResult] = await Promise.allSettled([kafkaContainer, registryContainer]);
  const started = [kafkaResult, registryResult].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = [kafkaResult, registryResult].find((r) => r.status === 'rejected');
  if (failure || kafkaResult.status !== 'fulfilled' || registryResult.status !== 'fulfilled') {
    await Promise.allSettled(started.map((c) => c.stop()));
    const reason = failure?.status === 'rejected' ? (failure.reason as unknown) : 'unknown';
    throw new Error(`the Docker stack did not come up: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  const kafka = kafkaResult.value;
  const registry = registryResult.value;
  const brokers = [`${host}:${hostPort}`];
  const registryUrl = `http://${registry.getHost()}:${registry.getMappedPort(8080)}${CCOMPAT_PATH}`;
  if (!(await kafkaAnswers(brokers, 10_000))) {
    await Promise.allSettled([registry.stop(), kafka.stop()]);
    throw new Error(`the Kafka container started but ${brokers[0]} does not answer metadata requests`);
  }
  let stopping: Promise<void> | undefined;
  return {
    brokers,
    registryUrl,
    startedHere: true,
    stop: () => {
      stopping ??= (async () => {
        await registry.stop();
        await kafka.stop({ timeout: 30_000 });
      })();
      return stopping;
    },
  };
}
