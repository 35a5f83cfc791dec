/**
 * How webhook host names become addresses, without one destination's DNS stalling another's.
 *
 * A socket resolves its host with `dns.lookup` unless told otherwise: getaddrinfo(3) on libuv's
 * thread pool — four threads, shared with file and crypto work. A destination whose name server
 * does not answer holds a thread for the resolver's whole timeout (resolv.conf's default: 5 s,
 * twice, per address family), and every new connection to it asks again, so a few of its
 * deliveries in flight make every other destination's new connections wait for a thread.
 * Measured with a name server that never answered one name (resolv.conf `timeout:2 attempts:1`):
 * eight requests to that name held a healthy destination's first request for 7.9 s.
 *
 * So names are resolved by c-ares (`dns.promises.Resolver`: its own sockets, no thread): A and
 * AAAA at once, a short timeout per try, one query per name however many connections wait for
 * it, and answers kept for their TTL (at most `MAX_TTL_MS`) — and, once expired, still used
 * for up to `STALE_MS` while a new query runs beside the connection (RFC 8767's serve-stale),
 * so a name server that goes down does not stop a destination already known. getaddrinfo stays
 * the fallback for what plain DNS does not answer — /etc/hosts entries, search domains (a
 * Kubernetes short name), a query that failed — but at most `SYSTEM_LOOKUPS` run at once, so
 * names that hang there too hold that many threads, never the pool; a name that needed it
 * keeps using it (cached) for a while. `localhost` names are loopback (RFC 6761) without
 * asking. With servers given (DELIVERY_DNS_SERVERS), only they are asked: no fallback.
 *
 * Hand-written rather than cacheable-lookup (the library got uses): that one fails a name
 * outright when its server times out (an /etc/hosts name would fail whenever DNS is down),
 * sends the names DNS does not know to getaddrinfo without a bound, and never serves stale.
 */
import { promises as dnsPromises } from 'node:dns';

export type Family = 4 | 6;

export interface ResolvedAddress {
  address: string;
  family: Family;
}

/** The two c-ares calls used, as `dns.promises.Resolver` has them. */
export interface DnsResolver {
  resolve4(hostname: string, options: { ttl: true }): Promise<Array<{ address: string; ttl: number }>>;
  resolve6(hostname: string, options: { ttl: true }): Promise<Array<{ address: string; ttl: number }>>;
}

export type SystemLookup = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * How a name was answered: from the cache, from an expired answer while it is refreshed, by a
 * DNS query, by getaddrinfo, as localhost; `failed`: a query that ended without an address.
 */
export const LOOKUP_ANSWERS = ['cache', 'stale', 'dns', 'system', 'localhost', 'failed'] as const;
export type LookupAnswer = (typeof LOOKUP_ANSWERS)[number];

export interface HostLookupOptions {
  /** Name servers (`ip` or `ip:port`) to ask instead of the system's; no getaddrinfo fallback then. */
  servers?: readonly string[] | undefined;
  /** c-ares' timeout of one try (it backs off on later tries). */
  tryTimeoutMs: number;
  tries: number;
  /** Replaces c-ares (tests of the fallback rules). */
  resolver?: DnsResolver;
  /** Replaces getaddrinfo. */
  systemLookup?: SystemLookup;
  now?: () => number;
  /** Told of every answer (the dispatcher counts them in `tributary_dispatcher_host_lookups_total`). */
  observe?: (answer: LookupAnswer) => void;
}

/** Answers are kept for their TTL, at most this long. */
export const MAX_TTL_MS = 300_000;
/** How long past its TTL an answer is still used while a new query runs. */
export const STALE_MS = 600_000;
/** getaddrinfo gives no TTL: what it answers is kept this long. */
export const SYSTEM_TTL_MS = 30_000;
/** A name that needed getaddrinfo goes there directly for this long. */
export const PREFER_SYSTEM_MS = 300_000;
/** getaddrinfo calls running at once: the pool threads a hanging name server can hold. */
export const SYSTEM_LOOKUPS = 2;
/** Once one family has answered, how long the other may still take. */
export const FAMILY_GRACE_MS = 100;
/** Names held in the caches; past it they are cleared (destinations' hosts are few). */
const CACHE_LIMIT = 10_000;

/** c-ares' "the name has no such record": not a failure of the server. */
const NO_RESULT_CODES = new Set(['ENODATA', 'ENOTFOUND', 'ENOENT']);

type FamilyOutcome = { kind: 'found'; entries: Array<ResolvedAddress & { ttl: number }> } | { kind: 'none' } | { kind: 'failed'; error: unknown };

export function isLocalhostName(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name === 'localhost' || name.endsWith('.localhost');
}

const LOOPBACK: readonly ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

function notFound(hostname: string, cause?: unknown): NodeJS.ErrnoException {
  return Object.assign(new Error(`no address for ${hostname}`, cause === undefined ? undefined : { cause }), { code: 'ENOTFOUND', hostname });
}

/** Waits for every outcome, or — once one has found addresses — `graceMs` longer for the rest. */
function settleWithGrace(outcomes: Array<Promise<FamilyOutcome>>, graceMs: number): Promise<Array<FamilyOutcome | undefined>> {
  return new Promise((resolve) => {
    const settled: Array<FamilyOutcome | undefined> = outcomes.map(() => undefined);
    let pending = outcomes.length;
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(grace);
      resolve(settled);
    };
    outcomes.forEach((outcome, index) => {
      void outcome.then((result) => {
        settled[index] = result;
        pending--;
        if (pending === 0) finish();
        else if (result.kind === 'found' && grace === undefined) grace = setTimeout(finish, graceMs);
      });
    });
  });
}

async function getaddrinfo(hostname: string): Promise<ResolvedAddress[]> {
  const entries = await dnsPromises.lookup(hostname, { all: true });
  return entries.filter((entry): entry is ResolvedAddress => entry.family === 4 || entry.family === 6);
}

/** A counting semaphore: at most `limit` holders, the rest wait in order. */
class Slots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.used >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.used++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }
}

export class HostLookup {
  private readonly resolver: DnsResolver;
  private readonly systemLookup: SystemLookup | undefined;
  private readonly now: () => number;
  private readonly answers = new Map<string, { entries: ResolvedAddress[]; expiresAt: number }>();
  private readonly preferSystemUntil = new Map<string, number>();
  private readonly pending = new Map<string, Promise<ResolvedAddress[]>>();
  private readonly systemSlots = new Slots(SYSTEM_LOOKUPS);
  private readonly observe: ((answer: LookupAnswer) => void) | undefined;
  /** Answers by how they were made; queries count when sent. */
  readonly counts: Record<LookupAnswer, number> = { cache: 0, stale: 0, dns: 0, system: 0, localhost: 0, failed: 0 };

  constructor(options: HostLookupOptions) {
    if (options.resolver) this.resolver = options.resolver;
    else {
      const resolver = new dnsPromises.Resolver({ timeout: options.tryTimeoutMs, tries: options.tries });
      if (options.servers && options.servers.length > 0) resolver.setServers([...options.servers]);
      this.resolver = resolver;
    }
    const ownServers = options.servers !== undefined && options.servers.length > 0;
    this.systemLookup = ownServers ? undefined : (options.systemLookup ?? getaddrinfo);
    this.now = options.now ?? Date.now;
    this.observe = options.observe;
  }

  private note(answer: LookupAnswer): void {
    this.counts[answer]++;
    this.observe?.(answer);
  }

  /** Every address of `hostname`, IPv4 first. Rejects with a code `classify` knows (ENOTFOUND, ETIMEOUT, …). */
  resolve(hostname: string): Promise<ResolvedAddress[]> {
    const name = hostname.toLowerCase();
    if (isLocalhostName(name)) {
      this.note('localhost');
      return Promise.resolve([...LOOPBACK]);
    }
    const cached = this.answers.get(name);
    const now = this.now();
    if (cached && cached.expiresAt > now) {
      this.note('cache');
      return Promise.resolve(cached.entries);
    }
    const query = this.queryOnce(name);
    if (cached && cached.expiresAt + STALE_MS > now) {
      // The refresh's failure is not this connection's: it connects to what worked before.
      query.catch(() => undefined);
      this.note('stale');
      return Promise.resolve(cached.entries);
    }
    return query;
  }

  private queryOnce(name: string): Promise<ResolvedAddress[]> {
    let query = this.pending.get(name);
    if (!query) {
      query = this.query(name).then(
        (entries) => {
          this.pending.delete(name);
          return entries;
        },
        (error: unknown) => {
          this.pending.delete(name);
          this.note('failed');
          throw error;
        },
      );
      this.pending.set(name, query);
    }
    return query;
  }

  private async query(name: string): Promise<ResolvedAddress[]> {
    if (this.systemLookup && (this.preferSystemUntil.get(name) ?? 0) > this.now()) return this.viaSystem(name, this.systemLookup);
    this.note('dns');
    const [four, six] = await settleWithGrace([this.family(name, 4), this.family(name, 6)], FAMILY_GRACE_MS);
    const found = [four, six].flatMap((outcome) => (outcome?.kind === 'found' ? outcome.entries : []));
    if (found.length > 0) {
      const ttlMs = Math.min(MAX_TTL_MS, ...found.map((entry) => entry.ttl * 1000));
      const entries = found.map(({ address, family }) => ({ address, family }));
      if (ttlMs > 0) this.remember(this.answers, name, { entries, expiresAt: this.now() + ttlMs });
      return entries;
    }
    const failure = [four, six].find((outcome) => outcome?.kind === 'failed');
    if (this.systemLookup) {
      const entries = await this.viaSystem(name, this.systemLookup);
      this.remember(this.preferSystemUntil, name, this.now() + PREFER_SYSTEM_MS);
      return entries;
    }
    if (failure?.kind === 'failed') throw failure.error;
    throw notFound(name);
  }

  private async family(name: string, family: Family): Promise<FamilyOutcome> {
    try {
      const records = family === 4 ? await this.resolver.resolve4(name, { ttl: true }) : await this.resolver.resolve6(name, { ttl: true });
      return records.length === 0 ? { kind: 'none' } : { kind: 'found', entries: records.map((record) => ({ address: record.address, family, ttl: record.ttl })) };
    } catch (error) {
      return NO_RESULT_CODES.has((error as NodeJS.ErrnoException).code ?? '') ? { kind: 'none' } : { kind: 'failed', error };
    }
  }

  private async viaSystem(name: string, lookup: SystemLookup): Promise<ResolvedAddress[]> {
    this.note('system');
    const entries = await this.systemSlots.run(() => lookup(name));
    if (entries.length === 0) throw notFound(name);
    const ordered = [...entries.filter((entry) => entry.family === 4), ...entries.filter((entry) => entry.family === 6)];
    this.remember(this.answers, name, { entries: ordered, expiresAt: this.now() + SYSTEM_TTL_MS });
    return ordered;
  }

  private remember<V>(map: Map<string, V>, name: string, value: V): void {
    if (map.size >= CACHE_LIMIT) map.clear();
    map.set(name, value);
  }
}
