/**
 * The ports `npm start`'s own processes listen on, checked before anything is started: a
 * service that cannot bind its port exits, is restarted with back-off and never comes up,
 * which reads as a crash loop rather than as the occupied port it is.
 */
import { createServer } from 'node:net';
import { OPS_PORTS, type LocalSettings } from './service-env.js';

export interface NeededPort {
  host: string;
  port: number;
  what: string;
}

export function portsNpmStartNeeds(settings: LocalSettings, serviceHost: string, demoReceiverPort: number): NeededPort[] {
  return [
    { host: serviceHost, port: settings.ingestPort, what: 'the ingest API (INGEST_PORT)' },
    ...Object.entries(OPS_PORTS).map(([name, port]) => ({ host: serviceHost, port, what: `the ${name}'s metrics and health endpoints` })),
    { host: '127.0.0.1', port: demoReceiverPort, what: 'the demo webhook receiver' },
  ];
}

export function portsTakenMessage(taken: NeededPort[]): string {
  const lines = taken.map(({ host, port, what }) => `  - ${host}:${port}, for ${what}`);
  const first = taken[0]?.port ?? 0;
  return [
    `${taken.length === 1 ? 'a port' : 'ports'} npm start needs ${taken.length === 1 ? 'is' : 'are'} already in use:`,
    ...lines,
    `Find what holds one with \`ss -ltnp 'sport = :${first}'\` (or \`lsof -nP -iTCP:${first} -sTCP:LISTEN\`) and stop it; ` +
      'INGEST_PORT moves the ingest API.',
  ].join('\n');
}

/** Whether a listener could bind host:port right now (a connect test would miss a listener bound to another address of ours). */
export function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function takenPorts(needed: NeededPort[], bindable: (host: string, port: number) => Promise<boolean> = canBind): Promise<NeededPort[]> {
  const results = await Promise.all(needed.map(async (p) => ((await bindable(p.host, p.port)) ? null : p)));
  return results.filter((p): p is NeededPort => p !== null);
}
