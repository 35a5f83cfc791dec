/**
 * Avro values on Kafka in the Confluent wire format (magic byte 0, 4-byte schema id,
 * Avro binary), with schemas registered in a Confluent-compatible registry under the
 * topic-name strategy (`<topic>-value`) and BACKWARD compatibility.
 *
 * Registration and schema look-ups go through @kafkajs/confluent-schema-registry. Values
 * are encoded with the writer type this process registered and decoded into the schema
 * this process was built with (the reader), through an avsc resolver cached per writer
 * id — the library would rebuild reader type and resolver on every decode, which is too
 * slow for the per-message path, and without a reader schema a record written by an
 * older or newer producer would reach the code in the writer's shape.
 */
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type avro from 'avsc';
import { avroType, loadSchema, type RawRecordSchema, type SchemaName } from '@tributary/schemas';
import { frameAvro, HEADER_BYTES, MAGIC_BYTE } from './avro-frame.js';
import type { Logger } from './logger.js';

export type Compatibility = 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FULL' | 'NONE';

export class AvroEncodeError extends Error {
  constructor(
    readonly topic: string,
    readonly paths: string[],
  ) {
    super(`value does not match the ${topic} schema at: ${paths.join(', ') || '(root)'}`);
    this.name = 'AvroEncodeError';
  }
}

/**
 * Why a value can never be decoded, however often it is tried: it is not Confluent-framed,
 * its schema id is unknown to the registry, its writer schema cannot be resolved into ours,
 * or its bytes are not valid Avro of that schema (truncated, say). Any other failure of
 * `decode` (the registry unreachable) may pass on a later try.
 */
export type UndecodableReason = 'not_framed' | 'unknown_schema' | 'incompatible_schema' | 'undecodable';

export class AvroDecodeError extends Error {
  constructor(
    readonly reason: UndecodableReason,
    message: string,
  ) {
    super(message);
    this.name = 'AvroDecodeError';
  }
}

/** Registry answers that say a schema id does not exist (Confluent: HTTP 404, error 40403). */
function isNotFound(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return status === 404;
}

interface TopicBinding {
  schemaId: number;
  type: avro.Type;
}

export interface AvroCodecOptions {
  registryUrl: string;
  logger: Logger;
  compatibility?: Compatibility;
  /** Each registry request's bound; default REGISTRY_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
}

/**
 * How long one request to the registry may take. Neither the registry client nor fetch has a
 * bound of its own (the client none, fetch five minutes): a registry that accepts connections
 * and never answers — stopped, wedged, or behind a network that drops packets — held a service
 * starting meanwhile silently at its first look-up, and would hold a partition whose record
 * names a schema id not yet seen. Bounded, the look-up fails, is logged and tried again
 * (`untilSuccess` at start-up; a decode failing for want of the registry is retried).
 */
export const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;

type RegistryMiddleware = NonNullable<ConstructorParameters<typeof SchemaRegistry>[0]['middlewares']>[number];

/** A registry client middleware that gives every request a timeout. */
function requestTimeout(timeoutMs: number): RegistryMiddleware {
  return () => ({ prepareRequest: (next) => next().then((request) => request.enhance({ timeout: timeoutMs })) });
}

export function subjectFor(topic: string): string {
  return `${topic}-value`;
}

export class AvroCodec {
  private readonly registry: SchemaRegistry;
  private readonly bindings = new Map<string, TopicBinding>();
  private readonly readers = new Map<SchemaName, avro.Type>();
  private readonly resolvers = new Map<string, avro.Resolver | null>();
  private readonly writerFetches = new Map<number, Promise<avro.Type>>();

  readonly registryUrl: string;
  private readonly requestTimeoutMs: number;

  constructor(private readonly options: AvroCodecOptions) {
    this.registryUrl = options.registryUrl.replace(/\/$/, '');
    this.requestTimeoutMs = options.requestTimeoutMs ?? REGISTRY_REQUEST_TIMEOUT_MS;
    this.registry = new SchemaRegistry({
      host: this.registryUrl,
      retry: { retries: 5, initialRetryTimeInSecs: 0.2, maxRetryTimeInSecs: 2 },
      middlewares: [requestTimeout(this.requestTimeoutMs)],
    });
  }

  /**
   * Sets the subject's compatibility level, then registers the schema (a no-op when the
   * registry already holds it). The level is set first so that the new version is
   * checked against the existing ones; an incompatible schema makes this throw.
   */
  async register(topic: string, name: SchemaName): Promise<number> {
    const id = await this.registerSchema(topic, loadSchema(name));
    this.bindings.set(topic, { schemaId: id, type: this.reader(name) });
    return id;
  }

  /** Registers any record schema under `<topic>-value` (used by `register` and by evolution tests). */
  async registerSchema(topic: string, raw: RawRecordSchema): Promise<number> {
    const subject = subjectFor(topic);
    const level = this.options.compatibility ?? 'BACKWARD';
    await this.setCompatibility(subject, level);
    const { id } = await this.registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(raw) },
      // The library types `compatibility` as its own string enum with these same names.
      { subject, compatibility: level as never },
    );
    this.options.logger.debug({ topic, subject, schemaId: id }, 'schema registered');
    return id;
  }

  async registerAll(topics: Array<{ topic: string; schema: SchemaName }>): Promise<void> {
    for (const { topic, schema } of topics) await this.register(topic, schema);
  }

  private async setCompatibility(subject: string, level: Compatibility): Promise<void> {
    // Several services (or replicas) start together and set the same subject's level at
    // once; Apicurio answers all but one of those first PUTs with 409 "rule already exists".
    // Once the rule exists a PUT succeeds, so a conflict is retried.
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.registryUrl}/config/${encodeURIComponent(subject)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ compatibility: level }),
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      if (response.ok) return;
      const detail = await response.text();
      if (response.status !== 409 || attempt >= 10) {
        throw new Error(`schema registry refused compatibility ${level} for ${subject}: ${response.status} ${detail}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }

  /** The avsc type for one of our schemas; also used for validation in tests and ingest. */
  reader(name: SchemaName): avro.Type {
    let type = this.readers.get(name);
    if (!type) {
      type = avroType(name);
      this.readers.set(name, type);
    }
    return type;
  }

  schemaId(topic: string): number {
    return this.binding(topic).schemaId;
  }

  private binding(topic: string): TopicBinding {
    const binding = this.bindings.get(topic);
    if (!binding) throw new Error(`no schema registered for topic ${topic}; call register() at start-up`);
    return binding;
  }

  encode(topic: string, value: unknown): Buffer {
    const { schemaId, type } = this.binding(topic);
    try {
      return frameAvro(type, schemaId, value);
    } catch {
      const paths: string[] = [];
      type.isValid(value, { errorHook: (path) => paths.push(path.join('.')) });
      throw new AvroEncodeError(topic, paths);
    }
  }

  /**
   * Decodes into the shape of `name`, resolving from whatever schema the writer used.
   * Throws `AvroDecodeError` when the value can never be decoded (see `UndecodableReason`);
   * any other error is transient.
   */
  async decode<T>(name: SchemaName, buffer: Buffer | null): Promise<T> {
    if (!buffer || buffer.length < HEADER_BYTES || buffer.readUInt8(0) !== MAGIC_BYTE) {
      throw new AvroDecodeError('not_framed', 'not a Confluent-framed Avro value (missing magic byte 0)');
    }
    const writerId = buffer.readUInt32BE(1);
    const reader = this.reader(name);
    const key = `${name}:${writerId}`;
    let resolver = this.resolvers.get(key);
    if (resolver === undefined) {
      const writer = await this.writerType(writerId);
      try {
        resolver = writer.equals(reader) ? null : reader.createResolver(writer);
      } catch (error) {
        throw new AvroDecodeError('incompatible_schema', `writer schema ${writerId} cannot be read as ${name}: ${messageOf(error)}`);
      }
      this.resolvers.set(key, resolver);
    }
    const payload = buffer.subarray(HEADER_BYTES);
    try {
      return (resolver ? reader.fromBuffer(payload, resolver) : reader.fromBuffer(payload)) as T;
    } catch (error) {
      throw new AvroDecodeError('undecodable', `not valid Avro of schema ${writerId}: ${messageOf(error)}`);
    }
  }

  private writerType(id: number): Promise<avro.Type> {
    let pending = this.writerFetches.get(id);
    if (!pending) {
      pending = this.registry.getSchema(id).then(
        (schema) => schema as unknown as avro.Type,
        (error: unknown) => {
          // Schema ids are never reused: one the registry does not know stays unknown.
          if (isNotFound(error)) throw new AvroDecodeError('unknown_schema', `schema id ${id} is not in the registry`);
          throw error;
        },
      );
      pending.catch(() => this.writerFetches.delete(id));
      this.writerFetches.set(id, pending);
    }
    return pending;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export type { RawRecordSchema };
