import { Writable } from 'node:stream';
import avro from 'avsc';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { censorLogFields, censorSecrets, createLogger, REDACTED } from './logger.js';

function capture(): { lines: () => string; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { lines: () => chunks.join(''), stream };
}

describe('createLogger', () => {
  it('censors secrets wherever this code base logs them', () => {
    const out = capture();
    const logger = createLogger({ service: 'test', destination: out.stream });
    logger.info({ sharedSecret: 'S1-top' }, 'flat');
    logger.info({ destination: { id: 'd', settings: { sharedSecret: 'S2-nested', standardWebhooksSecret: 'whsec_S3' } } }, 'nested');
    logger.info({ source: { id: 's', writeKey: 'WK-secret' } }, 'source');
    logger.info({ req: { headers: { authorization: 'Basic V0stc2VjcmV0Og==' } } }, 'request');
    logger.info({ destination: { settings: { webhooks: [{ url: 'https://x.example', headers: { 'X-Api-Token': 'tok-secret' } }] } } }, 'entry');
    logger.info({ webhooks: [{ url: 'https://x.example', headers: { Authorization: 'Bearer hdr-secret' } }] }, 'entries');
    const text = out.lines();
    for (const secret of ['S1-top', 'S2-nested', 'whsec_S3', 'WK-secret', 'V0stc2VjcmV0Og', 'tok-secret', 'hdr-secret']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
    expect(text).toContain('https://x.example');
    expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ service: 'test', level: 'info', msg: 'flat' });
  });
});

describe('censorSecrets', () => {
  it('censors keys in any case and at any depth up to six levels, and credential headers', () => {
    const logged = {
      writeKey: 'a',
      source: { WriteKey: 'b', nested: { deeper: { password: 'c' } } },
      req: { headers: { Cookie: 'd', 'X-Api-Key': 'e', accept: 'application/json' } },
      list: [{ adminToken: 'f' }, { fine: 1 }],
    };
    const censored = censorSecrets(logged);
    expect(censored).toEqual({
      writeKey: REDACTED,
      source: { WriteKey: REDACTED, nested: { deeper: { password: REDACTED } } },
      req: { headers: { Cookie: REDACTED, 'X-Api-Key': REDACTED, accept: 'application/json' } },
      list: [{ adminToken: REDACTED }, { fine: 1 }],
    });
  });

  it("censors a webhook entry's static headers whole, wherever the entries are", () => {
    const destination = { settings: { webhooks: [{ url: 'https://x.example/', headers: { 'X-Custom': 'v' } }] } };
    expect(censorSecrets({ destination })).toEqual({ destination: { settings: { webhooks: [{ url: 'https://x.example/', headers: REDACTED }] } } });
  });

  it("never changes the caller's objects, and returns them as they are when nothing is secret", () => {
    const config = { id: 'd', settings: { sharedSecret: 's', webhooks: [{ url: 'u', headers: { a: 'b' } }] } };
    const before = structuredClone(config);
    const censored = censorSecrets({ config });
    expect(config).toEqual(before);
    expect(censored.config).not.toBe(config);
    const plain = { messageId: 'm', urls: [{ target: 'webhooks[0]', status: 200 }], buffer: Buffer.from('writeKey') };
    expect(censorSecrets(plain)).toBe(plain);
  });

  it('censors class instances as JSON writes them, such as the records avsc decodes', () => {
    const type = avro.Type.forSchema({ type: 'record', name: 'Entry', fields: [{ name: 'url', type: 'string' }, { name: 'sharedSecret', type: 'string' }] });
    const decoded: unknown = type.fromBuffer(type.toBuffer({ url: 'https://x.example/', sharedSecret: 'S-avro' }));
    expect(Object.getPrototypeOf(decoded)).not.toBe(Object.prototype);
    expect(JSON.stringify(censorSecrets({ destination: decoded }))).toBe('{"destination":{"url":"https://x.example/","sharedSecret":"[redacted]"}}');
    class Settings {
      constructor(readonly writeKey: string) {}
    }
    expect(censorSecrets({ settings: new Settings('WK-class') })).toEqual({ settings: { writeKey: REDACTED } });
  });

  it('stops at six levels, and leaves what JSON writes its own way (toJSON, typed arrays) as it is', () => {
    const deep = { a: { b: { c: { d: { e: { f: { password: 'too deep' } } } } } } };
    expect(censorSecrets(deep)).toBe(deep);
    const map = new Map([['password', 'p']]);
    expect(censorSecrets({ map }).map).toBe(map);
    const withToJson = { toJSON: () => ({ shown: true }), password: 'p' };
    expect(censorSecrets({ withToJson }).withToJson).toBe(withToJson);
    const bytes = new Uint8Array(4);
    expect(censorSecrets({ bytes }).bytes).toBe(bytes);
  });

  it('censors what an error carries', () => {
    const out = capture();
    const logger = createLogger({ service: 'test', destination: out.stream });
    logger.error({ err: Object.assign(new Error('config rejected'), { config: { writeKey: 'WK-in-error' } }) }, 'failed');
    expect(out.lines()).not.toContain('WK-in-error');
    expect(JSON.parse(out.lines())).toMatchObject({ err: { type: 'Error', message: 'config rejected', config: { writeKey: REDACTED } } });
    const plain = new Error('nothing secret');
    expect(censorSecrets({ err: plain }).err).toBe(plain);
    const elsewhere = censorSecrets({ cause: Object.assign(new Error('nested'), { source: { writeKey: 'WK-nested' } }) });
    expect(JSON.stringify(elsewhere)).not.toContain('WK-nested');
    expect(elsewhere.cause).toMatchObject({ type: 'Error', message: 'nested' });
  });

  it('writes a logged error once, censored by its serializer, beside censored fields', () => {
    const out = capture();
    const logger = createLogger({ service: 'test', destination: out.stream });
    const serialize = vi.spyOn(pino.stdSerializers, 'err');
    try {
      logger.error({ source: { writeKey: 'WK-beside' }, err: new Error('nothing secret in it') }, 'failed');
      logger.warn({ error: Object.assign(new Error('under error'), { headers: { authorization: 'Bearer T' } }) }, 'failed too');
      expect(serialize).toHaveBeenCalledTimes(2);
    } finally {
      serialize.mockRestore();
    }
    const [first, second] = out.lines().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({ source: { writeKey: REDACTED }, err: { type: 'Error', message: 'nothing secret in it' } });
    expect(second).toMatchObject({ error: { message: 'under error', headers: { authorization: REDACTED } } });
    expect(out.lines()).not.toContain('Bearer T');
  });

  it("leaves a line's errors to the serializer, its other fields censored in their order, the caller's object unchanged", () => {
    const err = new Error('e');
    const fields = { a: 1, err, b: { writeKey: 'WK' } };
    const censored = censorLogFields(fields);
    expect(Object.keys(censored)).toEqual(['a', 'err', 'b']);
    expect(censored.err).toBe(err);
    expect(censored.b).toEqual({ writeKey: REDACTED });
    expect(fields.b.writeKey).toBe('WK');
    const plain = { a: 1 };
    expect(censorLogFields(plain)).toBe(plain);
  });

  it('censors child bindings', () => {
    const out = capture();
    createLogger({ service: 'test', destination: out.stream }).child({ source: { writeKey: 'WK-binding' } }).info('bound');
    expect(out.lines()).not.toContain('WK-binding');
  });
});
