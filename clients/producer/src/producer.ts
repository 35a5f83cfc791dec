/**
 * TributaryProducer: Segment calls written straight to `<namespace>.ingest.v1`, as ingest
 * writes them — the source found by its write key in the live config topic, every call
 * validated and normalised by ingest's own code, Avro through the schema registry, keyed by
 * anonymousId else userId with Kafka's murmur2 partitioner, and written as ingest writes
 * them (group commit: calls made while a write is in flight share the next; a group of one
 * record by itself, more in one Kafka transaction — atomic-output.ts). A call resolves once
 * the broker has it all.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Source } from '@tributary/schemas';
import { topicNames } from '@tributary/schemas';
import {
  AtomicOutput,
  AvroCodec,
  BatcherClosedError,
  BatcherFullError,
  ConfigView,
  createKafka,
  createLogger,
  ProduceBatcher,
  ProduceTimeoutError,
  SingleWriteFailed,
  TransactionOutcomeUnknown,
  type Logger,
  type ProduceRecord,
} from '@tributary/shared';
import { authenticate, type CallKind } from '@tributary/shared/segment';
import { RefusedError, SendFailedError } from './errors.js';
import type { AliasCall, BatchMessage, BatchOptions, GroupCall, IdentifyCall, PageCall, ScreenCall, TrackCall } from './messages.js';
import { prepareMessages } from './prepare.js';

export interface ProducerOptions {
  brokers: string[];
  /** The Confluent-compatible API of the registry, e.g. http://localhost:8081/apis/ccompat/v7 for Apicurio. */
  schemaRegistryUrl: string;
  /** The write key of the source the calls belong to, as an HTTP client would send it. */
  writeKey: string;
  /** TOPIC_NAMESPACE of the pipeline; default `tributary`. */
  topicNamespace?: string;
  /**
   * Kafka transactional id, stable per producing process (two live producers with the same
   * id fence each other). Default `<namespace>-producer-<host>-<pid>`.
   */
  transactionalId?: string;
  clientId?: string;
  /** Default: pino at `warn` on stdout, secrets redacted as in the services. */
  logger?: Logger;
  /** Longest a call waits for its transaction to commit; default 10 000 ms. */
  sendTimeoutMs?: number;
  /** Bytes waiting for Kafka beyond which calls are refused at once; default 32 MB. */
  maxBytesInFlight?: number;
}

export interface Sent {
  /** The messageIds written, in call order (generated where the call had none). */
  messageIds: string[];
}

export class TributaryProducer {
  private constructor(
    private readonly writeKey: string,
    private readonly ingestTopic: string,
    private readonly codec: AvroCodec,
    private readonly config: ConfigView,
    private readonly output: AtomicOutput,
    private readonly batcher: ProduceBatcher,
  ) {}

  /** Connects to Kafka and the registry, reads the config topic and registers the producers. */
  static async connect(options: ProducerOptions): Promise<TributaryProducer> {
    const namespace = options.topicNamespace ?? 'tributary';
    const topics = topicNames(namespace);
    const logger = options.logger ?? createLogger({ service: 'tributary-producer', level: 'warn' });
    const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId ?? 'tributary-producer', logger });
    const codec = new AvroCodec({ registryUrl: options.schemaRegistryUrl, logger });
    await codec.register(topics.ingest, 'ingest');
    const config = new ConfigView({ kafka, codec, logger, topic: topics.config, groupPrefix: `${namespace}-producer` });
    await config.start();
    const output = new AtomicOutput({ kafka, transactionalId: options.transactionalId ?? `${namespace}-producer-${hostname()}-${process.pid}`, defaultTopic: topics.ingest, logger });
    try {
      await output.start();
    } catch (error) {
      await config.stop();
      throw error;
    }
    const batcher = new ProduceBatcher({
      send: (records) => output.write(records),
      maxRecords: 5_000,
      maxBytes: 4_000_000,
      maxPendingBytes: options.maxBytesInFlight ?? 32 * 1024 * 1024,
      timeoutMs: options.sendTimeoutMs ?? 10_000,
    });
    return new TributaryProducer(options.writeKey, topics.ingest, codec, config, output, batcher);
  }

  identify(call: IdentifyCall): Promise<Sent> {
    return this.send(call, 'identify');
  }

  track(call: TrackCall): Promise<Sent> {
    return this.send(call, 'track');
  }

  page(call: PageCall): Promise<Sent> {
    return this.send(call, 'page');
  }

  screen(call: ScreenCall): Promise<Sent> {
    return this.send(call, 'screen');
  }

  group(call: GroupCall): Promise<Sent> {
    return this.send(call, 'group');
  }

  alias(call: AliasCall): Promise<Sent> {
    return this.send(call, 'alias');
  }

  /** Several calls, written together or not at all (one invalid message refuses the batch, as over HTTP). */
  batch(messages: BatchMessage[], options: BatchOptions = {}): Promise<Sent> {
    return this.send({ batch: messages, ...(options.context === undefined ? {} : { context: options.context }) }, 'batch');
  }

  /** Waits for calls in flight, then disconnects. */
  async close(): Promise<void> {
    await this.batcher.close();
    await this.output.stop();
    await this.config.stop();
  }

  private async send(body: object, kind: CallKind): Promise<Sent> {
    const source = this.source();
    const prepared = prepareMessages(body, kind, { source, receivedAt: Date.now(), newMessageId: randomUUID });
    if (!prepared.ok) throw new RefusedError(prepared.error);
    const records: ProduceRecord[] = prepared.messages.map(({ message, key }) => ({
      key: Buffer.from(key, 'utf8'),
      value: this.codec.encode(this.ingestTopic, message),
    }));
    const messageIds = prepared.messages.map(({ message }) => message.messageId);
    try {
      await this.batcher.submit(records);
    } catch (error) {
      if (error instanceof BatcherClosedError) throw new SendFailedError('the producer is closed', messageIds, false, { cause: error });
      if (error instanceof BatcherFullError) {
        throw new SendFailedError('too many messages are waiting for Kafka; retry shortly', messageIds, false, { cause: error });
      }
      if (error instanceof ProduceTimeoutError) throw new SendFailedError(error.message, messageIds, true, { cause: error });
      // An aborted transaction wrote nothing; one that failed at commit may have committed, and
      // a lone record the broker refused may have landed on an earlier try.
      const cause = error instanceof Error ? error.cause : undefined;
      const mayBeWritten = cause instanceof TransactionOutcomeUnknown || cause instanceof SingleWriteFailed;
      throw new SendFailedError('the Kafka write failed', messageIds, mayBeWritten, { cause: error });
    }
    return { messageIds };
  }

  private source(): Source {
    const auth = authenticate(this.writeKey, (writeKey) => this.config.sourceByWriteKey(writeKey));
    if (!auth.ok) throw new RefusedError(auth.error);
    return auth.source;
  }
}
