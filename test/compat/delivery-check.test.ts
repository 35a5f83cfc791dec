import { describe, expect, it } from 'vitest';
import type { IngestMessage } from '@tributary/schemas';
import { checkDelivery, parseWireTimestamp, type ArrivedRecord, type CheckContext } from './delivery-check.js';
import type { JsonObject, Manifest } from './manifest.js';

const RECEIVED = Date.parse('2026-11-21T12:00:01.500Z');
const CONTEXT: CheckContext = { sourceId: 'web', startedAt: RECEIVED - 1_000, finishedAt: RECEIVED + 1_000 };
const LIBRARY = { name: 'analytics-go', version: '2.1.0' };

/** A Go v2 run: one batch with a track (historic timestamp) and an alias, the library info at batch level. */
function goManifest(): Manifest {
  return {
    client: 'analytics-go',
    library: LIBRARY,
    calls: [
      {
        type: 'track',
        messageId: 'm-track',
        userId: 'u-1',
        event: 'Order Completed',
        properties: { city: 'Zürich', items: [{ sku: 'a' }] },
        integrations: { All: false, Webhooks: true },
        timestamp: '2015-03-14T16:09:26+0100',
      },
      { type: 'alias', messageId: 'm-alias', userId: 'u-1', previousId: 'a-1' },
    ],
    requests: [
      {
        path: '/v1/batch',
        headers: { 'content-type': 'application/json' },
        status: 200,
        body: {
          context: { library: LIBRARY },
          sentAt: '2026-11-21T17:30:01+0530',
          batch: [
            {
              type: 'track',
              messageId: 'm-track',
              userId: 'u-1',
              event: 'Order Completed',
              properties: { city: 'Zürich', items: [{ sku: 'a' }] },
              integrations: { All: false, Webhooks: true },
              timestamp: '2015-03-14T16:09:26+0100',
            },
            { type: 'alias', messageId: 'm-alias', userId: 'u-1', previousId: 'a-1', timestamp: '2026-11-21T17:30:01+0530' },
          ],
        },
      },
    ],
    errors: [],
  };
}

function record(value: Partial<IngestMessage> & Pick<IngestMessage, 'messageId' | 'type'>, key: string | null = 'u-1'): ArrivedRecord {
  return {
    key,
    partition: 0,
    offset: '0',
    value: {
      sourceId: 'web',
      userId: null,
      anonymousId: null,
      timestamp: RECEIVED,
      originalTimestamp: null,
      sentAt: Date.parse('2026-11-21T12:00:01Z'),
      receivedAt: RECEIVED,
      event: null,
      name: null,
      category: null,
      groupId: null,
      previousId: null,
      properties: null,
      traits: null,
      context: JSON.stringify({ library: LIBRARY }),
      integrations: null,
      ...value,
    },
  };
}

function goRecords(): ArrivedRecord[] {
  const historic = Date.parse('2015-03-14T15:09:26Z');
  return [
    record({
      messageId: 'm-track',
      type: 'track',
      userId: 'u-1',
      event: 'Order Completed',
      properties: JSON.stringify({ items: [{ sku: 'a' }], city: 'Zürich' }),
      integrations: JSON.stringify({ Webhooks: true, All: false }),
      originalTimestamp: historic,
      timestamp: historic,
    }),
    record({
      messageId: 'm-alias',
      type: 'alias',
      userId: 'u-1',
      previousId: 'a-1',
      originalTimestamp: Date.parse('2026-11-21T12:00:01Z'),
      timestamp: Date.parse('2026-11-21T12:00:01Z'),
    }),
  ];
}

describe('checkDelivery', () => {
  it('finds nothing wrong when every message arrived once, as sent', () => {
    expect(checkDelivery(goManifest(), goRecords(), CONTEXT)).toEqual([]);
  });

  it('accepts a timestamp corrected for clock skew', () => {
    const records = goRecords();
    const track = records[0]!.value;
    track.timestamp = track.originalTimestamp! + (track.receivedAt - track.sentAt!);
    expect(checkDelivery(goManifest(), records, CONTEXT)).toEqual([]);
  });

  it('reports a message that never arrived, and one that arrived twice', () => {
    const [track, alias] = goRecords();
    expect(checkDelivery(goManifest(), [track!, track!], CONTEXT)).toEqual([
      'track #1 (m-track): arrived 2 times (offsets 0/0, 0/0)',
      'alias #2 (m-alias): never arrived on the ingest topic',
    ]);
    expect(checkDelivery(goManifest(), [alias!], CONTEXT)).toEqual(['track #1 (m-track): never arrived on the ingest topic']);
  });

  it('reports records nobody sent and one call under two message ids', () => {
    const records = goRecords();
    const copy = structuredClone(records[1]!);
    copy.value.messageId = 'm-other';
    expect(checkDelivery(goManifest(), [...records, copy], CONTEXT)).toEqual([
      'unexpected record m-other (alias) at 0/0',
      'one call arrived under 2 message ids: m-alias, m-other',
    ]);
  });

  it('reports changed fields, a missing library context, lost integrations and the wrong key', () => {
    const records = goRecords();
    const track = records[0]!;
    track.value.properties = JSON.stringify({ city: 'Zurich', items: [{ sku: 'a' }] });
    track.value.context = '{}';
    track.value.integrations = null;
    track.value.event = 'order completed';
    track.key = 'a-1';
    expect(checkDelivery(goManifest(), records, CONTEXT)).toEqual([
      'track #1 (m-track): event is "order completed", expected "Order Completed"',
      'track #1 (m-track): record key is "a-1", expected anonymousId ?? userId = "u-1"',
      'track #1 (m-track): properties is {"city":"Zurich","items":[{"sku":"a"}]}, expected {"city":"Zürich","items":[{"sku":"a"}]}',
      'track #1 (m-track): integrations is null, expected {"All":false,"Webhooks":true}',
      'track #1 (m-track): context.library is undefined, expected {"name":"analytics-go","version":"2.1.0"}',
    ]);
  });

  it('reports a timestamp read without its offset', () => {
    const records = goRecords();
    const track = records[0]!.value;
    track.originalTimestamp = Date.parse('2015-03-14T16:09:26Z');
    track.timestamp = track.originalTimestamp;
    expect(checkDelivery(goManifest(), records, CONTEXT)).toEqual([
      'track #1 (m-track): originalTimestamp is 1426349366000 (2015-03-14T16:09:26.000Z), expected 1426345766000 (2015-03-14T15:09:26.000Z) (the library sent "2015-03-14T16:09:26+0100")',
    ]);
  });

  it('reports a timestamp that is neither the client one nor a skew correction of it', () => {
    const records = goRecords();
    records[1]!.value.timestamp = RECEIVED + 60_000;
    const problems = checkDelivery(goManifest(), records, CONTEXT);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^alias #2 \(m-alias\): timestamp is .*neither the client's/);
  });

  it('reports a refused request with what ingest answered, and the library errors', () => {
    const manifest = goManifest();
    manifest.requests[0]!.status = 400;
    manifest.requests[0]!.response = '{"error":"unknown field batch[0].integrations"}';
    manifest.errors = ['response 400 Bad Request'];
    const problems = checkDelivery(manifest, [], CONTEXT);
    expect(problems.slice(0, 2)).toEqual([
      'the library reported: response 400 Bad Request',
      'request 1 (POST /v1/batch, 2 messages) was refused: ingest answered 400 {"error":"unknown field batch[0].integrations"}',
    ]);
  });
});

/** The Go run as analytics.js would send it: each message alone to its short path, with its own sentAt. */
function singleMessageManifest(): Manifest {
  const manifest = goManifest();
  const [batch] = manifest.requests;
  const messages = (batch!.body.batch as JsonObject[]).map((message): JsonObject => ({ ...message, writeKey: '<write key>', sentAt: '2026-11-21T12:00:01.000Z' }));
  manifest.requests = messages.map((body) => ({ path: `/v1/${String(body.type).charAt(0)}`, headers: { 'content-type': 'text/plain' }, status: 200, body }));
  return manifest;
}

describe('checkDelivery with one message per request', () => {
  it('reads each message and its sentAt from a request body that is the message', () => {
    expect(checkDelivery(singleMessageManifest(), goRecords(), CONTEXT)).toEqual([]);
  });

  it('reports a wrong sentAt from such a body and a refused one as one message', () => {
    const manifest = singleMessageManifest();
    manifest.requests[0]!.body.sentAt = '2026-11-21T12:00:00.000Z';
    manifest.requests[1]!.status = 404;
    expect(checkDelivery(manifest, goRecords(), CONTEXT)).toEqual([
      'request 2 (POST /v1/a, 1 messages) was refused: ingest answered 404',
      'track #1 (m-track): sentAt is 1795262401000 (2026-11-21T12:00:01.000Z), expected 1795262400000 (2026-11-21T12:00:00.000Z) (the library sent "2026-11-21T12:00:00.000Z")',
      'alias #2 (m-alias): the message is not in any request the library made that ingest accepted',
    ]);
  });
});

describe('parseWireTimestamp', () => {
  it('reads the formats the four libraries send', () => {
    expect(parseWireTimestamp('2026-11-21T17:30:01+0530')).toBe(Date.parse('2026-11-21T12:00:01Z'));
    expect(parseWireTimestamp('2016-02-29T23:59:59.250-08:00')).toBe(Date.parse('2016-03-01T07:59:59.250Z'));
    expect(parseWireTimestamp('2026-11-21T12:00:01.123456+00:00')).toBe(Date.parse('2026-11-21T12:00:01.123Z'));
    expect(parseWireTimestamp('2019-06-20T08:15:42.123Z')).toBe(Date.parse('2019-06-20T08:15:42.123Z'));
  });

  it('refuses what none of them sends', () => {
    expect(parseWireTimestamp('2026-11-21 12:00:01')).toBeUndefined();
    expect(parseWireTimestamp('1795262401000')).toBeUndefined();
  });
});
