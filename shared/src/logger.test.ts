import { Writable } from 'node:stream';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { censorSecrets, createLogger, REDACTED } from './logger.js';

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

  it('censors child bindings', () => {
    const out = capture();
    createLogger({ service: 'test', destination: out.stream }).child({ source: { writeKey: 'WK-binding' } }).info('bound');
    expect(out.lines()).not.toContain('WK-binding');
  });
});
