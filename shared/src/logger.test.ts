import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

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
