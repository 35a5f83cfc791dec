/**
 * One realistic ingest record per message type, shared by the golden-file test and the
 * routing tests. The golden bodies in `__golden__/<type>.json` are these records rendered.
 */
import type { IngestMessage, MessageType } from '@tributary/schemas';

const at = (iso: string): number => Date.parse(iso);

const base: IngestMessage = {
  messageId: 'msg-0001',
  type: 'track',
  sourceId: 'web',
  userId: 'user-42',
  anonymousId: 'anon-7f3c',
  timestamp: at('2026-11-21T10:00:00.000Z'),
  originalTimestamp: at('2026-11-21T09:59:58.250Z'),
  sentAt: at('2026-11-21T10:00:01.000Z'),
  receivedAt: at('2026-11-21T10:00:02.345Z'),
  event: null,
  name: null,
  category: null,
  groupId: null,
  previousId: null,
  properties: null,
  traits: null,
  context: JSON.stringify({ ip: '203.0.113.9', library: { name: 'analytics-node', version: '2.1.0' }, locale: 'de-DE' }),
  integrations: null,
};

export const FIXTURES: Record<MessageType, IngestMessage> = {
  identify: {
    ...base,
    type: 'identify',
    messageId: 'msg-identify-1',
    traits: JSON.stringify({ email: 'ada@example.com', name: 'Ada Lovelace', plan: 'pro', logins: 12, 'üñí©ødé': '✓ "quoted" \\ back\nslash' }),
  },
  track: {
    ...base,
    type: 'track',
    messageId: 'msg-track-1',
    event: 'Order Completed',
    properties: JSON.stringify({ orderId: 'o-991', revenue: 42.5, currency: 'EUR', products: [{ sku: 'a-1', qty: 2 }], coupon: null }),
    integrations: JSON.stringify({ All: true, Webhooks: true, Mixpanel: false }),
  },
  page: {
    ...base,
    type: 'page',
    messageId: 'msg-page-1',
    userId: null,
    name: 'Pricing',
    category: 'Docs',
    properties: JSON.stringify({
      path: '/pricing',
      referrer: 'https://www.example.org/',
      title: 'Pricing – Example',
      url: 'https://example.com/pricing?plan=pro',
      search: '?plan=pro',
    }),
  },
  screen: {
    ...base,
    type: 'screen',
    messageId: 'msg-screen-1',
    anonymousId: null,
    originalTimestamp: null,
    sentAt: null,
    name: 'Home',
    properties: JSON.stringify({ variant: 'dark' }),
    context: JSON.stringify({
      app: { build: '1042', name: 'Example', version: '4.2.0' },
      device: { model: 'iPhone15,2', type: 'ios' },
      os: { name: 'iOS', version: '17.1' },
      ip: '198.51.100.4',
    }),
  },
  group: {
    ...base,
    type: 'group',
    messageId: 'msg-group-1',
    groupId: 'acme-inc',
    traits: JSON.stringify({ name: 'Acme Inc.', employees: 250, industry: 'Manufacturing' }),
  },
  alias: {
    ...base,
    type: 'alias',
    messageId: 'msg-alias-1',
    anonymousId: null,
    userId: 'user-42',
    previousId: 'anon-7f3c',
  },
  delete: {
    ...base,
    type: 'delete',
    messageId: 'msg-delete-1',
    anonymousId: null,
    originalTimestamp: null,
    sentAt: null,
    context: null,
    userId: 'user-42',
    timestamp: at('2026-11-21T11:30:00.000Z'),
    receivedAt: at('2026-11-21T11:30:00.000Z'),
  },
};
