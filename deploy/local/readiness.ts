import { connect } from 'node:net';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

/**
 * A real metadata round trip, not just an open port: the broker accepts connections before
 * the KRaft controller has elected itself and the broker is unfenced.
 */
export async function kafkaAnswers(brokers: string[], timeoutMs = 3_000): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'tributary-stack-probe',
    brokers,
    connectionTimeout: Math.min(1_000, timeoutMs),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  let timer: NodeJS.Timeout | undefined;
  try {
    const probe = (async () => {
      await admin.connect();
      const cluster = await admin.describeCluster();
      return cluster.brokers.length > 0;
    })();
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([probe.catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

/** `GET <ccompat>/subjects` answering 200 means storage is initialised and the API is served. */
export async function registryAnswers(registryUrl: string, timeoutMs = 3_000): Promise<boolean> {
  try {
    const res = await fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Whether anything accepts TCP connections on host:port (to explain bind failures up front). */
export function portInUse(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (inUse: boolean): void => {
      socket.destroy();
      resolve(inUse);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
