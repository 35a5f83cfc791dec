import { promises as dnsPromises, type LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../test/dns-server.js';
import { BLOCKED_ADDRESS_CODE } from './classify.js';
import { HostLookup, isLocalhostName, PREFER_SYSTEM_MS, STALE_MS, SYSTEM_LOOKUPS, SYSTEM_TTL_MS, type ResolvedAddress } from './host-lookup.js';
import { connectLookup } from './webhook-client.js';

let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer((name) => {
    if (name.endsWith('hang.test')) return 'hang';
    if (name === 'both.test') return { addresses: ['127.0.0.1', '::1'] };
    if (name === 'no-ttl.test') return { addresses: ['127.0.0.2'], ttl: 0 };
    if (name === 'drops-aaaa.test') return { addresses: ['127.0.0.3'], silentAaaa: true };
    if (name === 'private.test') return { addresses: ['10.1.2.3'] };
    if (name.endsWith('good.test')) return { addresses: ['127.0.0.1'] };
    return 'nxdomain';
  });
});

afterAll(() => dns.close());

/** Short tries: a name whose server never answers fails in well under a second. */
const ownServers = () => new HostLookup({ servers: [dns.address], tryTimeoutMs: 300, tries: 1 });

/** The test server as the resolver, but "the system's" (fallback on), with getaddrinfo played by `system`. */
function withFallback(system: (name: string) => Promise<ResolvedAddress[]>, now?: () => number): HostLookup {
  const resolver = new dnsPromises.Resolver({ timeout: 300, tries: 1 });
  resolver.setServers([dns.address]);
  return new HostLookup({ resolver, systemLookup: system, tryTimeoutMs: 300, tries: 1, ...(now ? { now } : {}) });
}

function tracked<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined);
  return { settled: () => settled, promise: watched };
}

describe('HostLookup against a name server', () => {
  it('resolves A and AAAA, IPv4 first, and keeps the answer for its TTL', async () => {
    const hosts = ownServers();
    expect(await hosts.resolve('both.test')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    const asked = dns.queries.get('both.test');
    expect(await hosts.resolve('BOTH.test')).toHaveLength(2);
    expect(dns.queries.get('both.test')).toBe(asked);
    expect(hosts.counts.cache).toBe(1);
  });

  it('keeps using an expired answer while its name server is down, for a while', async () => {
    let clock = 5_000_000;
    let up = true;
    const resolver = {
      resolve4: async () => {
        if (!up) throw Object.assign(new Error('queryA ETIMEOUT known.test'), { code: 'ETIMEOUT' });
        return [{ address: '127.0.0.5', ttl: 30 }];
      },
      resolve6: async () => [],
    };
    const observed: string[] = [];
    const hosts = new HostLookup({ servers: ['127.0.0.1'], resolver, tryTimeoutMs: 100, tries: 1, now: () => clock, observe: (answer) => observed.push(answer) });
    expect(await hosts.resolve('known.test')).toEqual([{ address: '127.0.0.5', family: 4 }]);
    up = false;
    clock += 31_000;
    // Expired: the old answer at once, a new query beside it (which fails).
    expect(await hosts.resolve('known.test')).toEqual([{ address: '127.0.0.5', family: 4 }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(hosts.counts).toMatchObject({ dns: 2, stale: 1, failed: 1 });
    clock += STALE_MS;
    await expect(hosts.resolve('known.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    // The stale answer's refresh and this one.
    expect(hosts.counts.failed).toBe(2);
    up = true;
    expect(await hosts.resolve('known.test')).toEqual([{ address: '127.0.0.5', family: 4 }]);
    expect(observed).toEqual(['dns', 'dns', 'stale', 'failed', 'dns', 'failed', 'dns']);
  });

  it('asks again for a name answered with TTL 0', async () => {
    const hosts = ownServers();
    await hosts.resolve('no-ttl.test');
    await hosts.resolve('no-ttl.test');
    expect(hosts.counts.dns).toBe(2);
  });

  it('does not wait out a family the server leaves unanswered once the other has answered', async () => {
    const hosts = new HostLookup({ servers: [dns.address], tryTimeoutMs: 20_000, tries: 1 });
    // The grace after the A answer is 100 ms; the AAAA try would take 20 s.
    const answer = await Promise.race([hosts.resolve('drops-aaaa.test'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 10_000))]);
    expect(answer).toEqual([{ address: '127.0.0.3', family: 4 }]);
  });

  it('answers localhost names without asking', async () => {
    const hosts = ownServers();
    expect(await hosts.resolve('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(isLocalhostName('hooks.localhost.')).toBe(true);
    expect(isLocalhostName('localhost.example.com')).toBe(false);
    expect(hosts.counts).toMatchObject({ dns: 0, localhost: 1 });
  });

  it('resolves a name while names whose server never answers are still waiting', async () => {
    // Tries long enough that a loaded machine answers the good name well before they end.
    const hosts = new HostLookup({ servers: [dns.address], tryTimeoutMs: 3_000, tries: 1 });
    const hanging = Array.from({ length: 40 }, (_, index) => tracked(hosts.resolve(`h${index % 8}.hang.test`)));
    const good = await hosts.resolve('a.good.test');
    expect(good).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(hanging.filter((lookup) => lookup.settled())).toEqual([]);
    for (const lookup of hanging) await expect(lookup.promise).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('asks once for a name however many connections wait for it', async () => {
    const hosts = ownServers();
    const waiting = Array.from({ length: 20 }, () => hosts.resolve('once.hang.test').catch((error: unknown) => error));
    await Promise.all(waiting);
    // One A and one AAAA query, one try each.
    expect(dns.queries.get('once.hang.test')).toBe(2);
  });

  it('rejects an unknown name with ENOTFOUND, without a fallback when its servers are given', async () => {
    await expect(ownServers().resolve('unknown.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('the getaddrinfo fallback', () => {
  it('resolves what DNS does not know (an /etc/hosts name) and goes there directly for that name afterwards', async () => {
    let clock = 1_000_000;
    const asked: string[] = [];
    const hosts = withFallback(async (name) => {
      asked.push(name);
      return name === 'hosts-file.test' ? [{ address: '127.0.0.9', family: 4 }] : [];
    }, () => clock);
    expect(await hosts.resolve('hosts-file.test')).toEqual([{ address: '127.0.0.9', family: 4 }]);
    expect(hosts.counts).toMatchObject({ dns: 1, system: 1 });
    const refreshed = () => new Promise((resolve) => setTimeout(resolve, 50));
    // Expired: the answer is used stale while getaddrinfo is asked again directly.
    clock += SYSTEM_TTL_MS + 1;
    await hosts.resolve('hosts-file.test');
    await refreshed();
    expect(hosts.counts).toMatchObject({ dns: 1, system: 2, stale: 1 });
    // Past the preference, DNS is asked first again (and falls back again).
    clock += PREFER_SYSTEM_MS;
    await hosts.resolve('hosts-file.test');
    await refreshed();
    expect(hosts.counts).toMatchObject({ dns: 2, system: 3, stale: 2 });
    expect(asked).toEqual(['hosts-file.test', 'hosts-file.test', 'hosts-file.test']);
    await expect(hosts.resolve('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('runs at most a few getaddrinfo calls at once, so names that hang there too cannot take the thread pool', async () => {
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const hosts = withFallback(
      (name) =>
        new Promise((resolve) => {
          running++;
          most = Math.max(most, running);
          releases.push(() => {
            running--;
            resolve([{ address: '127.0.0.1', family: 4 } as LookupAddress as ResolvedAddress]);
          });
          void name;
        }),
    );
    const stuck = Array.from({ length: 10 }, (_, index) => hosts.resolve(`s${index}.hang.test`));
    await expect.poll(() => most, { timeout: 10_000 }).toBe(SYSTEM_LOOKUPS);
    // Every name's DNS query has given up by now; none has got past the two slots.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(running).toBe(SYSTEM_LOOKUPS);
    // Names DNS answers are not queued behind them.
    expect(await hosts.resolve('b.good.test')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(stuck);
    expect(most).toBe(SYSTEM_LOOKUPS);
  });
});

describe('connectLookup', () => {
  const call = (lookup: ReturnType<typeof connectLookup>, hostname: string, options: Parameters<ReturnType<typeof connectLookup>>[1]) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined }>((resolve) =>
      lookup(hostname, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('gives the first address, or all of them, of the family asked for', async () => {
    const lookup = connectLookup(ownServers(), false);
    expect(await call(lookup, 'both.test', {})).toMatchObject({ error: null, address: '127.0.0.1', family: 4 });
    expect(await call(lookup, 'both.test', { family: 6 })).toMatchObject({ error: null, address: '::1', family: 6 });
    expect(await call(lookup, 'both.test', { all: true })).toMatchObject({ address: [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }] });
    expect((await call(lookup, 'a.good.test', { family: 6 })).error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('refuses a name that resolves to a private address when guarded', async () => {
    const guarded = connectLookup(ownServers(), true);
    expect((await call(guarded, 'private.test', { all: true })).error).toMatchObject({ code: BLOCKED_ADDRESS_CODE });
    expect((await call(connectLookup(ownServers(), false), 'private.test', {})).address).toBe('10.1.2.3');
  });
});
