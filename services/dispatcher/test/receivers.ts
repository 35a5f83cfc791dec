/**
 * Real webhook receivers for integration tests: node:http and node:https servers on
 * 127.0.0.1 that record every request (raw body bytes and headers) and answer as the
 * test says. Certificates are made with the openssl CLI.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** Answers a request: a status to send (at once, or after a delay, with extra headers), or 'hang' to never answer. */
export type Behaviour = (request: ReceivedRequest) => number | { status: number; afterMs?: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url(path?: string): string;
  port: number;
  requests: ReceivedRequest[];
  /** TLS handshakes that failed (the client refused our certificate). */
  tlsErrors: number;
  close(): Promise<void>;
}

/** Routes by path: `/status/503` answers 503, `/hang` never answers, anything else 200. */
export const byPath: Behaviour = ({ path }) => {
  if (path.startsWith('/hang')) return 'hang';
  const status = /^\/status\/(\d{3})/.exec(path);
  return status ? Number(status[1]) : 200;
};

function listenOn(server: Server, scheme: 'http' | 'https', behaviour: Behaviour): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const receiver = { requests, tlsErrors: 0 } as Receiver;
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      requests.push(received);
      const answer = behaviour(received);
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const { status, afterMs = 0, headers = {}, body = JSON.stringify({ received: true }) } = typeof answer === 'number' ? { status: answer } : answer;
      const respond = () => {
        if (status >= 300 && status < 400) response.setHeader('location', '/elsewhere');
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(body);
      };
      if (afterMs > 0) setTimeout(respond, afterMs);
      else respond();
    });
  });
  server.on('tlsClientError', () => receiver.tlsErrors++);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      Object.assign(receiver, {
        port,
        url: (path = '/') => `${scheme}://127.0.0.1:${port}${path}`,
        close: async () => {
          for (const response of hanging) response.destroy();
          server.closeAllConnections();
          await new Promise<void>((done) => server.close(() => done()));
        },
      });
      resolve(receiver);
    });
  });
}

export function startReceiver(behaviour: Behaviour = byPath): Promise<Receiver> {
  return listenOn(createHttpServer(), 'http', behaviour);
}

export function startHttpsReceiver(credentials: { key: string; cert: string }, behaviour: Behaviour = byPath): Promise<Receiver> {
  return listenOn(createHttpsServer({ key: credentials.key, cert: credentials.cert }), 'https', behaviour);
}

export interface TestCertificates {
  /** A certificate signed by itself, for 127.0.0.1. */
  selfSigned: { key: string; cert: string };
  /** A certificate for 127.0.0.1 signed by `caFile`. */
  caSigned: { key: string; cert: string };
  /** PEM file of the CA, for NODE_EXTRA_CA_CERTS of the process under test. */
  caFile: string;
  remove(): void;
}

/** Makes a self-signed certificate and a small CA with one leaf certificate, with openssl. */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-certs-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const san = 'subjectAltName=IP:127.0.0.1,DNS:localhost';
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('self.key'), '-out', file('self.crt'), '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', san);
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=Tributary Test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', '/CN=127.0.0.1', '-addext', san);
  openssl('x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('leaf.crt'), '-days', '2', '-copy_extensions', 'copy');
  const read = (name: string) => readFileSync(file(name), 'utf8');
  return {
    selfSigned: { key: read('self.key'), cert: read('self.crt') },
    caSigned: { key: read('leaf.key'), cert: read('leaf.crt') },
    caFile: file('ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
