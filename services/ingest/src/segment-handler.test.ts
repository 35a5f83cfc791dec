import { describe, expect, it } from 'vitest';
import type { Source } from '@tributary/schemas';
import { createLogger, createMetrics } from '@tributary/shared';
import { createIngestMetrics } from './ingest-metrics.js';
import { createSegmentHandler, type SegmentCall } from './segment-handler.js';

const SOURCES: Record<string, Source> = {
  wk_web: { id: 'web', name: 'Web', writeKey: 'wk_web', enabled: true },
  wk_app: { id: 'app', name: 'App', writeKey: 'wk_app', enabled: true },
};

function handlerWithTurns() {
  const turns: string[] = [];
  const handle = createSegmentHandler({
    sourceByWriteKey: (key) => SOURCES[key],
    encode: (message, lane) => ({ topic: `ingest-${lane}`, value: Buffer.from(JSON.stringify(message)) }),
    submit: async () => undefined,
    isReady: () => true,
    isOverloaded: () => false,
    logger: createLogger({ service: 'ingest-test', level: 'silent' }),
    metrics: createIngestMetrics(createMetrics('ingest-handler-test').registry),
    inTurn: async (key, work) => {
      turns.push(key);
      return work();
    },
  });
  return { handle, turns };
}

const call = (body: object, authorization?: string): SegmentCall => ({
  kind: 'track',
  authorization,
  contentType: 'text/plain',
  contentEncoding: undefined,
  body: Buffer.from(JSON.stringify(body)),
});

describe('the turn a request waits in', () => {
  it('is its source’s, whether the write key came in the header or in the body', async () => {
    const { handle, turns } = handlerWithTurns();
    const track = { type: 'track', event: 'e', anonymousId: 'a' };
    expect((await handle(call(track, `Basic ${Buffer.from('wk_web:').toString('base64')}`))).status).toBe(200);
    expect((await handle(call({ ...track, writeKey: 'wk_app' }))).status).toBe(200);
    expect(turns).toEqual(['web', 'app']);
  });

  it('is shared by bodies naming no known write key, which are then refused as before', async () => {
    const { handle, turns } = handlerWithTurns();
    const track = { type: 'track', event: 'e', anonymousId: 'a' };
    expect((await handle(call({ ...track, writeKey: 'not-a-key' }))).status).toBe(401);
    expect((await handle(call(track))).status).toBe(401);
    expect(turns).toEqual(['', '']);
  });

  it('authenticates by the parsed top-level write key, not by the hint', async () => {
    const { handle, turns } = handlerWithTurns();
    const body = { type: 'track', event: 'e', anonymousId: 'a', properties: { writeKey: 'wk_app' }, writeKey: 'not-a-key' };
    expect((await handle(call(body))).status).toBe(401);
    expect(turns).toEqual(['app']);
  });
});
