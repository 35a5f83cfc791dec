import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { checkSignature, summarizeWebhook } from './webhook-signature.js';

export interface DemoReceiver {
  url: string;
  close(): Promise<void>;
}

export interface DemoReceiverOptions {
  host: string;
  port: number;
  path: string;
  secret: string;
  log: (line: string) => void;
}

/**
 * Stands in for a customer's endpoint in the local demo config: shows what arrives and
 * whether X-Signature verifies with the shared secret, and answers 200 so deliveries succeed.
 */
export function startDemoReceiver(opts: DemoReceiverOptions): Promise<DemoReceiver> {
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (req.method !== 'POST' || url.pathname !== opts.path) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const { type, messageId } = summarizeWebhook(body);
      const signature = checkSignature(opts.secret, body, req.headers['x-signature']);
      const extra = req.headers['x-tributary-demo'] ? ' X-Tributary-Demo present' : '';
      opts.log(`${type} ${messageId} signature ${signature} (${body.length} bytes)${extra}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    req.on('error', () => res.destroy());
  };
  const server = createServer(handle);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve({
        url: `http://${opts.host}:${opts.port}${opts.path}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
