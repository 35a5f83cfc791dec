import { describe, expect, it } from 'vitest';
import { kafkaLoggingConfig, newClusterId, renderServerProperties, singleNodeSettings, toKafkaImageEnv } from './kafka-config.js';

function parseProperties(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    map.set(line.slice(0, i), line.slice(i + 1));
  }
  return map;
}

describe('renderServerProperties', () => {
  const props = parseProperties(
    renderServerProperties({ host: '127.0.0.1', port: 9092, controllerPort: 9093 }, '/data/kafka'),
  );

  it('configures a combined KRaft node on loopback', () => {
    expect(props.get('process.roles')).toBe('broker,controller');
    expect(props.get('node.id')).toBe('1');
    expect(props.get('controller.quorum.voters')).toBe('1@127.0.0.1:9093');
    expect(props.get('listeners')).toBe('PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093');
    expect(props.get('advertised.listeners')).toBe('PLAINTEXT://127.0.0.1:9092');
    expect(props.get('controller.listener.names')).toBe('CONTROLLER');
    expect(props.get('log.dirs')).toBe('/data/kafka');
  });

  it('makes groups and transactions work with one replica', () => {
    expect(props.get('offsets.topic.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.min.isr')).toBe('1');
    expect(props.get('group.initial.rebalance.delay.ms')).toBe('0');
  });

  it('leaves topic creation to the services', () => {
    expect(props.get('auto.create.topics.enable')).toBe('false');
    expect(props.get('num.partitions')).toBe('6');
  });

  it('escapes backslashes for java.util.Properties', () => {
    const text = renderServerProperties({ host: '127.0.0.1', port: 1, controllerPort: 2 }, 'C:\\data');
    expect(text).toContain('log.dirs=C:\\\\data');
  });
});

describe('toKafkaImageEnv', () => {
  it('follows the apache/kafka image naming', () => {
    const env = toKafkaImageEnv({
      'transaction.state.log.min.isr': '1',
      'some_under.score': 'x',
      'with-dash.key': 'y',
    });
    expect(env).toEqual({
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_SOME__UNDER_SCORE: 'x',
      KAFKA_WITH___DASH_KEY: 'y',
    });
  });

  it('covers every single-node setting', () => {
    expect(Object.keys(toKafkaImageEnv(singleNodeSettings()))).toHaveLength(Object.keys(singleNodeSettings()).length);
  });
});

describe('kafkaLoggingConfig', () => {
  it('uses log4j1 syntax and flag for Kafka 3', () => {
    const c = kafkaLoggingConfig('log4j1');
    expect(c.contents).toContain('log4j.rootLogger=INFO, stdout');
    expect(c.jvmFlag('/x/log4j.properties')).toBe('-Dlog4j.configuration=file:/x/log4j.properties');
  });

  it('uses log4j2 syntax and flag for Kafka 4', () => {
    const c = kafkaLoggingConfig('log4j2');
    expect(c.contents).toContain('appender.stdout.type=Console');
    expect(c.jvmFlag('/x/log4j2.properties')).toBe('-Dlog4j2.configurationFile=/x/log4j2.properties');
  });
});

describe('newClusterId', () => {
  it('is a 22-character base64url Kafka Uuid', () => {
    expect(newClusterId()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });

  it('rerolls ids that start with a dash and the all-zero id', () => {
    const draws = [Buffer.from([0xf8, ...Array<number>(15).fill(1)]), Buffer.alloc(16), Buffer.alloc(16, 7)];
    const id = newClusterId(() => draws.shift() ?? Buffer.alloc(16, 9));
    expect(id).toBe(Buffer.alloc(16, 7).toString('base64url'));
  });
});
