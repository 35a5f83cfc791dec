/**
 * A registry that takes connections and never answers (stopped, wedged, or behind a network
 * that drops packets): every look-up fails within its bound instead of waiting for ever.
 * The "registry" is a real TCP server that accepts and stays silent.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testLogger } from '@tributary/test/harness';
import { AvroCodec, AvroDecodeError } from './avro.js';

const TIMEOUT_MS = 300;

describe('a registry that never answers', () => {
  let server: Server;
  let url: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    url = `http://127.0.0.1:${address.port}/apis/ccompat/v7`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('registering a schema fails within the bound', async () => {
    const codec = new AvroCodec({ registryUrl: url, logger: testLogger('avro-timeout'), requestTimeoutMs: TIMEOUT_MS });
    const started = Date.now();
    await expect(codec.register('timeout-topic', 'ingest')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 10);
  });

  it('decoding a record of a schema id not seen yet fails within the bound, as the registry being away, not as an unreadable record', async () => {
    const codec = new AvroCodec({ registryUrl: url, logger: testLogger('avro-timeout'), requestTimeoutMs: TIMEOUT_MS });
    const framed = Buffer.from([0, 0, 0, 0, 42, 2, 3]);
    const started = Date.now();
    const error = await codec.decode('ingest', framed).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AvroDecodeError);
    // The client's own retries (5, up to 2 s apart) are for answers it may retry; a timeout is not one.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 10);
  });
});
