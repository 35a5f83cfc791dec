/**
 * A real DNS server on a loopback UDP port, for tests of how webhook hosts are resolved: it
 * answers A and AAAA queries from a zone the test gives, says NXDOMAIN to names it does not
 * know, and never answers names the zone marks `hang` — a name server that is down.
 */
import dgram from 'node:dgram';
import { isIP } from 'node:net';

/** `silentAaaa`: AAAA queries go unanswered (a server or middlebox that drops them). */
export type ZoneAnswer = { addresses: string[]; ttl?: number; silentAaaa?: boolean } | 'hang' | 'nxdomain';

export interface DnsServer {
  /** `127.0.0.1:port`, as DELIVERY_DNS_SERVERS takes it. */
  address: string;
  /** Queries received per name (lower-case, no trailing dot). */
  queries: Map<string, number>;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function questionEnd(message: Buffer): { name: string; end: number; type: number } {
  let offset = 12;
  const labels: string[] = [];
  while (message[offset] !== 0) {
    const length = message[offset]!;
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += length + 1;
  }
  offset += 1;
  const type = message.readUInt16BE(offset);
  return { name: labels.join('.').toLowerCase(), end: offset + 4, type };
}

function record(type: number, address: string, ttl: number): Buffer {
  const data = type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(ttl, 6);
  head.writeUInt16BE(data.length, 10);
  return Buffer.concat([head, data]);
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...new Array<string>(8 - front.length - back.length).fill('0'), ...back];
  const bytes = Buffer.alloc(16);
  all.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}

export async function startDnsServer(zone: (name: string) => ZoneAnswer): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const queries = new Map<string, number>();
  socket.on('message', (message, peer) => {
    const { name, end, type } = questionEnd(message);
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const answer = zone(name);
    if (answer === 'hang' || (answer !== 'nxdomain' && answer.silentAaaa && type === TYPE_AAAA)) return;
    const header = Buffer.alloc(12);
    message.copy(header, 0, 0, 2); // the query's id
    const records =
      answer === 'nxdomain'
        ? []
        : answer.addresses.filter((address) => isIP(address) === (type === TYPE_A ? 4 : type === TYPE_AAAA ? 6 : -1)).map((address) => record(type, address, answer.ttl ?? 30));
    header.writeUInt16BE(0x8180 | (answer === 'nxdomain' ? 3 : 0), 2); // response, recursion desired and available, NOERROR/NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    socket.send(Buffer.concat([header, message.subarray(12, end), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
