import { describe, expect, it } from 'vitest';
import { ConfigValidationError } from '@tributary/shared';
import { AdminError, toAdminError } from './errors.js';

describe('toAdminError', () => {
  it('keeps admin errors and turns config validation into a 400 with issues', () => {
    const conflict = new AdminError(409, 'already_exists', 'exists');
    expect(toAdminError(conflict)).toBe(conflict);
    expect(toAdminError(new ConfigValidationError([{ path: 'settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }]), 'destination')?.body()).toEqual({
      error: 'invalid destination: settings.webhooks[5]: at most 5 webhook URLs per destination',
      code: 'invalid_request',
      issues: [{ path: 'settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }],
    });
  });

  it('names Fastify body refusals with our codes', () => {
    const parse = Object.assign(new Error('Body is not valid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(toAdminError(parse)?.body()).toEqual({ error: 'Body is not valid JSON', code: 'invalid_json', issues: [] });
    const media = Object.assign(new Error('Unsupported Media Type: text/csv'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
    expect(toAdminError(media)?.status).toBe(415);
    expect(toAdminError(media)?.code).toBe('unsupported_media_type');
  });

  it('leaves our own failures to the caller', () => {
    expect(toAdminError(new Error('broker down'))).toBeUndefined();
    expect(toAdminError(Object.assign(new Error('x'), { statusCode: 500 }))).toBeUndefined();
  });
});
