import { randomBytes } from 'node:crypto';
import type { KafkaLogging } from './versions.js';

export interface KafkaNodeSettings {
  host: string;
  port: number;
  controllerPort: number;
}

/**
 * What makes one KRaft node behave like a real cluster for the services, as key/values so the
 * same settings feed both server.properties (local JVM) and the apache/kafka image env (Docker).
 */
export function singleNodeSettings(): Record<string, string> {
  return {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.listener.names': 'CONTROLLER',
    // One replica is all there is; the defaults (3) would make the coordinator topics, and so
    // consumer groups and transactions, unavailable.
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    // Coordinator topics default to 50 partitions each; on a laptop that is 100 sets of
    // segment files for no benefit with a single broker.
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.num.partitions': '10',
    'group.initial.rebalance.delay.ms': '0',
    // Services create their topics with the partition counts and configs they need; a typo'd
    // topic name should fail loudly rather than appear with defaults.
    'auto.create.topics.enable': 'false',
    'num.partitions': '6',
    'default.replication.factor': '1',
    'min.insync.replicas': '1',
  };
}

export function renderServerProperties(node: KafkaNodeSettings, logDir: string): string {
  const settings: Record<string, string> = {
    ...singleNodeSettings(),
    'controller.quorum.voters': `1@${node.host}:${node.controllerPort}`,
    listeners: `PLAINTEXT://${node.host}:${node.port},CONTROLLER://${node.host}:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${node.host}:${node.port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': logDir,
  };
  const lines = Object.entries(settings).map(([k, v]) => `${k}=${escapePropertyValue(v)}`);
  return `# Written by deploy/local/stack.ts on every start; edits are overwritten.\n${lines.join('\n')}\n`;
}

/** java.util.Properties treats backslashes as escapes (Windows paths) and ':'/'=' only in keys. */
function escapePropertyValue(value: string): string {
  return value.replace(/\\/g, '\\\\');
}

/**
 * Env names the apache/kafka image turns back into properties: `.` → `_`, `_` → `__`,
 * `-` → `___`, upper-cased, with a KAFKA_ prefix.
 */
export function toKafkaImageEnv(settings: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings)) {
    const name = key.replace(/_/g, '__').replace(/-/g, '___').replace(/\./g, '_').toUpperCase();
    env[`KAFKA_${name}`] = value;
  }
  return env;
}

export interface LoggingConfig {
  fileName: string;
  contents: string;
  jvmFlag: (path: string) => string;
}

/**
 * Console only: the JVM's stdout is already redirected into logs/kafka.log, so a file
 * appender would just write a second copy. Per-request and state-change loggers are chatty at
 * INFO and say nothing useful for local work.
 */
export function kafkaLoggingConfig(kind: KafkaLogging): LoggingConfig {
  if (kind === 'log4j1') {
    return {
      fileName: 'log4j.properties',
      jvmFlag: (p) => `-Dlog4j.configuration=file:${p}`,
      contents: [
        'log4j.rootLogger=INFO, stdout',
        'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
        'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
        'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
        'log4j.logger.kafka.request.logger=WARN',
        'log4j.logger.state.change.logger=WARN',
        'log4j.logger.kafka.log.LogCleaner=WARN',
        '',
      ].join('\n'),
    };
  }
  return {
    fileName: 'log4j2.properties',
    jvmFlag: (p) => `-Dlog4j2.configurationFile=${p}`,
    contents: [
      'rootLogger.level=INFO',
      'rootLogger.appenderRef.stdout.ref=STDOUT',
      'appender.stdout.type=Console',
      'appender.stdout.name=STDOUT',
      'appender.stdout.layout.type=PatternLayout',
      'appender.stdout.layout.pattern=[%d] %p %m (%c)%n',
      'logger.request.name=kafka.request.logger',
      'logger.request.level=WARN',
      'logger.statechange.name=state.change.logger',
      'logger.statechange.level=WARN',
      '',
    ].join('\n'),
  };
}

/**
 * A Kafka cluster id: 16 random bytes, base64url without padding (Uuid.toString). Like Kafka's
 * Uuid.randomUuid, ids starting with '-' are rerolled because CLI parsers take them for flags.
 */
export function newClusterId(random: (n: number) => Buffer = randomBytes): string {
  for (;;) {
    const bytes = random(16);
    const id = bytes.toString('base64url');
    if (!id.startsWith('-') && !bytes.every((b) => b === 0)) return id;
  }
}
