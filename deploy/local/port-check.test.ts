import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { canBind, portsNpmStartNeeds, portsTakenMessage, takenPorts } from './port-check.js';

const settings = { configPath: '/c.yaml', adminToken: 't', ingestPort: 8080, deliveryLogDir: '/d' };

describe('portsNpmStartNeeds', () => {
  it('lists ingest, every ops port and the demo receiver', () => {
    expect(portsNpmStartNeeds(settings, '127.0.0.1', 8090).map((p) => p.port)).toEqual([8080, 9101, 9102, 9103, 9104, 8090]);
  });
});

describe('portsTakenMessage', () => {
  it('names each port, what needs it, and how to find its holder', () => {
    const message = portsTakenMessage([{ host: '127.0.0.1', port: 8080, what: 'the ingest API (INGEST_PORT)' }]);
    expect(message).toContain('127.0.0.1:8080, for the ingest API (INGEST_PORT)');
    expect(message).toContain("ss -ltnp 'sport = :8080'");
  });
});

describe('takenPorts', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('finds a port something listens on, and only that one', async () => {
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('no address');
    const busy = { host: '127.0.0.1', port: address.port, what: 'x' };
    // Freed right away: a port that was free a moment ago.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const freePort = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    expect(await takenPorts([busy, { host: '127.0.0.1', port: freePort, what: 'y' }])).toEqual([busy]);
    expect(await canBind('127.0.0.1', freePort)).toBe(true);
  });
});
