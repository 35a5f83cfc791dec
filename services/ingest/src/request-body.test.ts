import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_BYTES } from '@tributary/shared/segment';
import { checkContentType, contentEncoding, decodeBody } from './request-body.js';

describe('checkContentType', () => {
  it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=ISO-8859-1', 'text/plain', 'text/plain;charset=UTF-8'])(
    'accepts %s',
    (header) => expect(checkContentType(header)).toBeUndefined(),
  );

  it.each([undefined, '', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'text/html'])(
    'refuses %j with 415',
    (header) => expect(checkContentType(header)).toMatchObject({ status: 415, code: 'unsupported_media_type' }),
  );
});

describe('contentEncoding', () => {
  it('accepts none, identity and gzip', () => {
    expect(contentEncoding(undefined)).toBe('identity');
    expect(contentEncoding('identity')).toBe('identity');
    expect(contentEncoding('GZIP')).toBe('gzip');
    expect(contentEncoding('x-gzip')).toBe('gzip');
  });

  it.each(['br', 'deflate', 'gzip, br', 'compress'])('refuses %s with 415', (header) => {
    expect(contentEncoding(header)).toMatchObject({ status: 415, code: 'unsupported_content_encoding' });
  });
});

describe('decodeBody', () => {
  it('passes a plain body of exactly the limit and refuses one byte more', async () => {
    expect(await decodeBody(Buffer.alloc(MAX_REQUEST_BYTES, 0x20), 'identity')).toHaveLength(MAX_REQUEST_BYTES);
    expect(await decodeBody(Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x20), 'identity')).toMatchObject({
      status: 400,
      code: 'request_too_large',
      details: { limit: 512000 },
    });
  });

  it('decompresses gzip up to exactly the limit and refuses one byte more', async () => {
    const atLimit = await decodeBody(gzipSync(Buffer.alloc(MAX_REQUEST_BYTES, 0x20)), 'gzip');
    expect(Buffer.isBuffer(atLimit) && atLimit.length).toBe(MAX_REQUEST_BYTES);
    expect(await decodeBody(gzipSync(Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x20)), 'gzip')).toMatchObject({ status: 400, code: 'request_too_large' });
  });

  it('stops a gzip bomb at the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MB of zeros in about 64 KB
    expect(bomb.length).toBeLessThan(100_000);
    expect(await decodeBody(bomb, 'gzip')).toMatchObject({ status: 400, code: 'request_too_large' });
  });

  it('refuses a body that is not gzip', async () => {
    expect(await decodeBody(Buffer.from('{"batch":[]}'), 'gzip')).toMatchObject({ status: 400, code: 'invalid_gzip' });
  });
});
