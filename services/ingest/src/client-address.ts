/**
 * The address a request came from, as ingest stores it in `context.ip` (hosted Segment's
 * rule: the request's address when the client sent none). Behind a load balancer the socket's
 * peer is the balancer, and the client is in `X-Forwarded-For`; but that header is whatever
 * the client wrote in it plus what each proxy appended, so it is read only as far as
 * INGEST_TRUST_PROXY says proxies are trusted — Fastify's `trustProxy` rule for `true` and a
 * hop count, kept here because the HTTP server is shared and built without it:
 *
 * - `false` (0 hops): the socket's peer;
 * - a number n: the address the n-th proxy from ingest saw (`1` behind one load balancer: the
 *   address it appended, which a client cannot forge by sending X-Forwarded-For itself);
 * - `true` (every hop): the first address in the header, as the client or first proxy put it.
 */
import { isIP } from 'node:net';

/** How many proxies in front of ingest are trusted to have appended to X-Forwarded-For. */
export type TrustedProxies = number;

/** INGEST_TRUST_PROXY: `false`/`0`, `true` (every hop), or a hop count. Undefined for anything else. */
export function parseTrustProxy(text: string): TrustedProxies | undefined {
  const value = text.trim().toLowerCase();
  if (value === 'false' || value === 'no') return 0;
  if (value === 'true' || value === 'yes') return Number.POSITIVE_INFINITY;
  return /^\d+$/.test(value) ? Number(value) : undefined;
}

/** An IPv4 address as Node reports it on a dual-stack socket (`::ffff:203.0.113.7`), written as IPv4. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/**
 * One X-Forwarded-For entry as an address: bare, or as some proxies write it with a port
 * (`203.0.113.7:5123`, `[2001:db8::1]:443`); undefined when it is not an IP address.
 */
function forwardedAddress(entry: string): string | undefined {
  const text = entry.trim();
  if (isIP(text) !== 0) return text;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed && isIP(bracketed[1]!) === 6) return bracketed[1];
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(text);
  if (withPort && isIP(withPort[1]!) === 4) return withPort[1];
  return undefined;
}

/**
 * The client's address: the socket's peer, or — for trusted proxies — the entry of
 * X-Forwarded-For that many hops back (the nearest proxy appends last). A hop that is not an
 * IP address ends the walk at the last address before it. Undefined only without a peer
 * address (a destroyed socket).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string | undefined {
  let address = peer === undefined ? undefined : plain(peer);
  if (trusted <= 0 || address === undefined || forwardedFor === undefined) return address;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
  for (let back = 1; back <= trusted && back <= hops.length; back++) {
    const hop = forwardedAddress(hops[hops.length - back]!);
    if (hop === undefined) break;
    address = plain(hop);
  }
  return address;
}
