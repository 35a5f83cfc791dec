import { describe, expect, it } from 'vitest';
import { classifySqlError } from './client.js';

describe('classifySqlError', () => {
  it('sets aside what the data causes', () => {
    expect(classifySqlError({ code: '22021' })).toBe('data'); // invalid byte sequence
    expect(classifySqlError({ code: '22P02' })).toBe('data'); // invalid text representation
    expect(classifySqlError({ code: '54000' })).toBe('data'); // index row too large
    expect(classifySqlError({ code: '23502' })).toBe('data'); // not null violation
  });

  it('retries everything else: outages, lost connections, deadlocks, timeouts, unknown errors', () => {
    expect(classifySqlError({ code: '57P01' })).toBe('transient'); // admin shutdown
    expect(classifySqlError({ code: '08006' })).toBe('transient'); // connection failure
    expect(classifySqlError({ code: '40P01' })).toBe('transient'); // deadlock
    expect(classifySqlError({ code: '57014' })).toBe('transient'); // statement timeout
    expect(classifySqlError({ code: 'ECONNREFUSED' })).toBe('transient');
    expect(classifySqlError(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(classifySqlError(undefined)).toBe('transient');
  });
});
