/**
 * The live configuration every service reads: the compacted config topic materialised
 * into memory, with the look-ups the hot paths need (source by write key, destinations
 * by source) kept as indexes rebuilt on each change. Config changes are rare and small;
 * look-ups happen per message.
 */
import type { Kafka } from 'kafkajs';
import type { ConfigEntry, Destination, Source } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import { isDestination, parseConfigKey, type ConfigState } from './config-model.js';
import type { Logger } from './logger.js';
import { CompactedTopicReader } from './table.js';

/**
 * How many destinations a source's messages are delivered to: the enabled ones. Ingest counts
 * a source's share with it and the router sizes its routing chunks with it, so both weigh a
 * message by the deliveries it makes, not by the destinations merely connected.
 */
export function enabledDestinations(destinations: ReadonlyArray<{ enabled: boolean }>): number {
  let enabled = 0;
  for (const destination of destinations) if (destination.enabled) enabled++;
  return enabled;
}

export class ConfigView {
  private sourcesById = new Map<string, Source>();
  private sourcesByWriteKey = new Map<string, Source>();
  private destinationsById = new Map<string, Destination>();
  private destinationsBySource = new Map<string, Destination[]>();
  private readonly listeners = new Set<() => void>();
  private changes = 0;
  readonly reader: CompactedTopicReader<ConfigEntry>;

  /** Counts the changes applied: a caller that planned with the view can tell whether it moved since. */
  get version(): number {
    return this.changes;
  }

  constructor(options: { kafka: Kafka; codec: AvroCodec; logger: Logger; topic: string; groupPrefix?: string }) {
    this.reader = new CompactedTopicReader<ConfigEntry>({
      kafka: options.kafka,
      topic: options.topic,
      logger: options.logger,
      decode: (value) => options.codec.decode<ConfigEntry>('config', value),
      ...(options.groupPrefix ? { groupPrefix: options.groupPrefix } : {}),
    });
    this.reader.onChange(() => this.reindex());
  }

  async start(): Promise<void> {
    await this.reader.start();
    this.reindex();
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  /** Called after every applied change (also during the initial catch-up). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  source(id: string): Source | undefined {
    return this.sourcesById.get(id);
  }

  sourceByWriteKey(writeKey: string): Source | undefined {
    return this.sourcesByWriteKey.get(writeKey);
  }

  destination(id: string): Destination | undefined {
    return this.destinationsById.get(id);
  }

  /** Destinations connected to a source, enabled or not (the router reports why it skips). */
  destinationsForSource(sourceId: string): readonly Destination[] {
    return this.destinationsBySource.get(sourceId) ?? [];
  }

  state(): ConfigState {
    return { sources: [...this.sourcesById.values()], destinations: [...this.destinationsById.values()] };
  }

  private reindex(): void {
    this.changes++;
    const sourcesById = new Map<string, Source>();
    const destinationsById = new Map<string, Destination>();
    for (const [key, entry] of this.reader.entries()) {
      const parsed = parseConfigKey(key);
      if (!parsed) continue;
      if (parsed.kind === 'destination' && isDestination(entry.entity)) destinationsById.set(parsed.id, entry.entity);
      if (parsed.kind === 'source' && !isDestination(entry.entity)) sourcesById.set(parsed.id, entry.entity);
    }
    const sourcesByWriteKey = new Map<string, Source>();
    for (const source of sourcesById.values()) sourcesByWriteKey.set(source.writeKey, source);
    const destinationsBySource = new Map<string, Destination[]>();
    for (const destination of destinationsById.values()) {
      for (const sourceId of destination.sources) {
        const list = destinationsBySource.get(sourceId) ?? [];
        list.push(destination);
        destinationsBySource.set(sourceId, list);
      }
    }
    this.sourcesById = sourcesById;
    this.sourcesByWriteKey = sourcesByWriteKey;
    this.destinationsById = destinationsById;
    this.destinationsBySource = destinationsBySource;
    for (const listener of this.listeners) listener();
  }
}
