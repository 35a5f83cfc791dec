/**
 * Spec section 6 end to end: a deletion request forwards one `delete` notification per
 * affected source that has the Webhooks destination enabled, and a Personas audience sync
 * sends an Identify per member on the first sync and then only for users whose membership
 * changed, with the snake_case audience name as a boolean trait. All four services run as
 * processes; a real receiver checks each request's X-Signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, stackEnv, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';

const ADMIN_TOKEN = 'e2e-personas-admin-token';
const SECRET = 'personas-shared-secret';

interface Received {
  path: string;
  body: Record<string, unknown>;
  signatureValid: boolean;
}

describe('deletion notifications and audience syncs reach the webhooks', () => {
  const namespace = uniqueNamespace('persona');
  const services: RunningService[] = [];
  const received: Received[] = [];
  let server: Server;
  let baseUrl: string;
  let ingest: RunningService;

  const admin = adminClient(() => ingest.url, ADMIN_TOKEN);

  const waitFor = async (condition: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(received)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const expected = createHmac('sha1', SECRET).update(raw).digest();
        const given = Buffer.from(String(request.headers['x-signature'] ?? ''), 'hex');
        received.push({
          path: request.url ?? '',
          body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
          signatureValid: given.length === expected.length && timingSafeEqual(given, expected),
        });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const env = { ...stackEnv(namespace), ADMIN_TOKEN };
    for (const name of ['ingest', 'router', 'dispatcher'] as const) services.push(await startService(name, { env }));
    ingest = services[0]!;

    // Two sources with a destination each, a third source whose destination is disabled,
    // and a fourth source with no destination at all.
    for (const id of ['web', 'app', 'pos', 'legacy']) {
      await admin('PUT', `/sources/${id}`, { name: id, writeKey: `wk_${id}_${namespace}` });
    }
    const destination = (source: string, enabled = true) => ({
      type: 'webhooks',
      sources: [source],
      enabled,
      settings: { sharedSecret: SECRET, webhooks: [{ url: `${baseUrl}/${source}` }] },
    });
    await admin('PUT', '/destinations/web-hooks', destination('web'));
    await admin('PUT', '/destinations/app-hooks', destination('app'));
    await admin('PUT', '/destinations/pos-hooks', destination('pos', false));
  });

  afterAll(async () => {
    for (const service of services.reverse()) await service.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('forwards one delete notification per source with the destination enabled', async () => {
    const answer = await admin<{ messages: Array<{ sourceId: string; messageId: string }> }>('POST', '/deletions', { userId: 'user-to-forget' });
    // One notification per enabled source; the router forwards those whose source has the destination enabled.
    expect(answer.messages.map((m) => m.sourceId).sort()).toEqual(['app', 'legacy', 'pos', 'web']);
    await waitFor(() => received.filter((r) => r.body.type === 'delete').length >= 2, 'two delete webhooks');
    // Give a wrong third delivery time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const deletes = received.filter((r) => r.body.type === 'delete');
    expect(deletes.map((r) => r.path).sort()).toEqual(['/app', '/web']);
    for (const { body, signatureValid } of deletes) {
      expect(signatureValid).toBe(true);
      expect(body).not.toHaveProperty('version');
      expect(body).toMatchObject({ type: 'delete', userId: 'user-to-forget' });
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(typeof body.messageId).toBe('string');
    }
    const idOf = (sourceId: string) => answer.messages.find((m) => m.sourceId === sourceId)!.messageId;
    expect(deletes.find((r) => r.path === '/web')!.body.messageId).toBe(idOf('web'));
    expect(deletes.find((r) => r.path === '/app')!.body.messageId).toBe(idOf('app'));
  });

  it('syncs an audience: everyone on the first sync, then only the changes', async () => {
    const identifies = () => received.filter((r) => r.body.type === 'identify' && r.path === '/web');
    const trait = (r: Received) => (r.body.traits as Record<string, unknown>)['high_value_users'];

    const first = await admin<{ added: number; removed: number }>('PUT', '/audiences/High%20Value%20Users/members', {
      sourceId: 'web',
      userIds: ['ana', 'bo', 'cy'],
    });
    expect(first).toMatchObject({ added: 3, removed: 0 });
    await waitFor(() => identifies().length >= 3, 'three identify webhooks');
    expect(identifies().map((r) => [r.body.userId, trait(r)]).sort()).toEqual([
      ['ana', true],
      ['bo', true],
      ['cy', true],
    ]);
    for (const r of identifies()) {
      expect(r.signatureValid).toBe(true);
      expect(r.body.version).toBe(1);
    }

    const second = await admin<{ added: number; removed: number; unchanged: number }>('PUT', '/audiences/High%20Value%20Users/members', {
      sourceId: 'web',
      userIds: ['bo', 'cy', 'di'],
    });
    expect(second).toMatchObject({ added: 1, removed: 1, unchanged: 2 });
    await waitFor(() => identifies().length >= 5, 'two more identify webhooks');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(identifies().slice(3).map((r) => [r.body.userId, trait(r)]).sort()).toEqual([
      ['ana', false],
      ['di', true],
    ]);
    expect(identifies()).toHaveLength(5);
  });
});
