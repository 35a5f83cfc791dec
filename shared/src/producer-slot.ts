/**
 * The life of a producer that is thrown away when it fails: connected at start (waiting for
 * the broker if it is away), replaced after a failure, reconnected in the background until
 * that succeeds. `TransactionalOutput` and `SingleRecordOutput` keep one each; what a
 * producer needs before it is usable (registering a transactional id, say) is their
 * `prepare`. A producer whose connecting or preparing failed is disconnected here.
 *
 * Only the caller whose failure asked for the replacement waits, for one try; while the
 * background keeps trying, `current()` fails at once. Connecting can last as long as the broker
 * is away, and the callers are consumers holding a batch (which must return to let the group
 * rebalance) or HTTP requests (which answer 503 while the service is unready). Nor do two
 * connections run at once: for a transactional id that would be two registrations fencing each
 * other.
 */
import type { Producer } from 'kafkajs';
import type { Logger } from './logger.js';
import { untilSuccess } from './patience.js';

/** What the slot needs of a producer: kafkajs's `Producer`, or a test's stand-in. */
export type Connectable = Pick<Producer, 'connect' | 'disconnect'>;

export interface ProducerSlotOptions<P extends Connectable> {
  /** The producer, for logs: "transactional producer tributary-ingest-0". */
  name: string;
  logger: Logger;
  /** A new, unconnected producer (`createProducer`). */
  create: () => P;
  /** What a connected producer needs before it is used; a failure discards the producer. */
  prepare?: ((producer: P) => Promise<void>) | undefined;
  /** Told when a connected producer exists or stops existing (readiness). */
  onUsable?: ((usable: boolean) => void) | undefined;
}

export class ProducerSlot<P extends Connectable = Producer> {
  private producer: P | undefined;
  private connecting: Promise<P> | undefined;
  private reconnecting = false;
  /** Aborted by `stop()`: ends every wait for the broker. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: ProducerSlotOptions<P>) {}

  /** Connects, waiting for the broker if it is away (`signal` ends the wait). */
  async start(signal?: AbortSignal): Promise<void> {
    const stop = this.stopping.signal;
    await untilSuccess(() => this.current(), { logger: this.options.logger, doing: `connecting the ${this.options.name}`, signal: signal ? AbortSignal.any([signal, stop]) : stop });
  }

  /** The connected producer; connects one if there is none, unless a reconnection is under way. */
  current(): Promise<P> {
    if (this.producer) return Promise.resolve(this.producer);
    if (this.stopping.signal.aborted) return Promise.reject(new Error(`the ${this.options.name} is stopped`));
    if (this.reconnecting) return Promise.reject(new Error(`the ${this.options.name} is reconnecting`));
    return this.connectOnce();
  }

  /**
   * Disconnects `broken` — if it is still the current producer — and connects a new one: once
   * before returning, then in the background until it succeeds.
   */
  async replace(broken: P): Promise<void> {
    if (this.producer !== broken) return;
    this.producer = undefined;
    this.options.onUsable?.(false);
    await broken.disconnect().catch((error: unknown) => this.options.logger.warn({ err: error }, `disconnecting the failed ${this.options.name}`));
    try {
      await this.connectOnce();
    } catch (error) {
      this.options.logger.error({ err: error }, `could not replace the ${this.options.name}; reconnecting in the background`);
      // The next caller would connect too — but one that waits for readiness (ingest answers
      // 503 while the producer is unusable) never calls: keep trying here.
      this.reconnectInBackground();
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    const producer = this.producer;
    this.producer = undefined;
    this.options.onUsable?.(false);
    await producer?.disconnect();
  }

  private connectOnce(): Promise<P> {
    this.connecting ??= (async () => {
      const producer = await this.connect();
      if (this.stopping.signal.aborted) {
        await producer.disconnect().catch(() => undefined);
        throw new Error(`the ${this.options.name} is stopped`);
      }
      this.producer = producer;
      this.options.onUsable?.(true);
      return producer;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<P> {
    const producer = this.options.create();
    try {
      await producer.connect();
      await this.options.prepare?.(producer);
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    return producer;
  }

  private reconnectInBackground(): void {
    if (this.reconnecting || this.stopping.signal.aborted) return;
    this.reconnecting = true;
    void untilSuccess(() => (this.producer ? Promise.resolve(this.producer) : this.connectOnce()), {
      logger: this.options.logger,
      doing: `reconnecting the ${this.options.name}`,
      signal: this.stopping.signal,
    })
      .catch(() => undefined)
      .finally(() => {
        this.reconnecting = false;
      });
  }
}
