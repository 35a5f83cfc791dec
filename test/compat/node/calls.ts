/**
 * The calls both Node drivers make: one of each of the six, with values that catch
 * sloppy handling — non-ASCII text, HTML-special characters, nested objects and arrays,
 * null, floats — a fixed historical timestamp, an integrations map and a context.
 * `prefix` keeps the ids of the two libraries apart.
 */
import type { PlannedCall } from '../manifest.js';

/** Sent as a Date, so the library puts `toISOString()` on the wire. */
export const HISTORIC_TIMESTAMP = '2019-06-20T08:15:42.123Z';

export function nodeCalls(prefix: string, runId: string): PlannedCall[] {
  const userId = `${prefix}-user-${runId}`;
  const anonymousId = `${prefix}-anon-${runId}`;
  return [
    {
      type: 'identify',
      userId,
      traits: {
        name: 'Zoë Ångström',
        city: '東京',
        motto: 'naïve café & <crème brûlée> 🚀',
        plan: { tier: 'pro', seats: 5, addons: ['sso', 'audit'] },
        vip: true,
        score: 9.75,
        nickname: null,
      },
      context: { ip: '203.0.113.7', locale: 'nb-NO', campaign: { name: 'vår-kampanje', source: 'nyhetsbrev' } },
      timestamp: HISTORIC_TIMESTAMP,
    },
    {
      type: 'track',
      userId,
      event: 'Order Completed — ✓',
      properties: {
        orderId: `ord-${runId}`,
        revenue: 12.5,
        currency: 'EUR',
        products: [{ sku: 'sku-1', name: 'Café au lait', quantity: 2 }],
        shipping: { address: { city: 'Zürich', zip: '8001' } },
      },
      integrations: { All: false, Webhooks: true, Mixpanel: false },
    },
    {
      type: 'page',
      userId,
      anonymousId,
      name: 'Pricing',
      category: 'Docs',
      properties: {
        url: 'https://example.com/pricing?ref=søk',
        title: 'Prix & Tarifs – Tributary',
        referrer: 'https://example.org/',
        path: '/pricing',
      },
    },
    {
      type: 'screen',
      anonymousId,
      name: 'Checkout',
      category: 'Mobile',
      properties: { step: 2, variant: 'grön', flags: { darkMode: true } },
    },
    {
      type: 'group',
      userId,
      groupId: `${prefix}-group-${runId}`,
      traits: { name: 'Acme Åland Oy', employees: 42, address: { country: 'FI', city: 'Mariehamn' } },
    },
    { type: 'alias', userId, previousId: anonymousId },
  ];
}
