import { describe, expect, it } from 'vitest';
import { classifySqlError } from './client.js';

describe('classifySqlError', () => {
  it('sets aside what the data causes', () => {
    expect(classifySqlError({ code: '22021' })).toBe('data'); // invalid byte sequence
    expect(classifySqlError({ code: '22P02' })).toBe('data'); // invalid text representation
    expect(classifySqlError({ code: '54000' })).toBe('data'); // index row too large
    expect(classifySqlError({ code: '23502' })).toBe('data'); // not null violation
  });

  it('retries outages, lost connections, deadlocks and timeouts', () => {
    expect(classifySqlError({ code: '57P01' })).toBe('transient'); // admin shutdown
    expect(classifySqlError({ code: '08006' })).toBe('transient'); // connection failure
    expect(classifySqlError({ code: '40P01' })).toBe('transient'); // deadlock
    expect(classifySqlError({ code: '57014' })).toBe('transient'); // statement timeout
    expect(classifySqlError({ code: 'ECONNREFUSED' })).toBe('transient');
    expect(classifySqlError(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' }))).toBe('transient');
    expect(classifySqlError(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(classifySqlError(new Error('timeout exceeded when trying to connect'))).toBe('transient');
    expect(classifySqlError(new Error('Client has encountered a connection error and is not queryable'))).toBe('transient');
    expect(classifySqlError(new Error('PGlite is closed'))).toBe('transient');
  });

  it('calls an error with no SQLSTATE and no sign of the connection other, for the caller to check the database', () => {
    // What JSON.stringify threw for a record nesting 6,000 arrays: retried, it stopped the partition for good.
    expect(classifySqlError(new RangeError('Maximum call stack size exceeded'))).toBe('other');
    expect(classifySqlError(new TypeError("Cannot read properties of undefined (reading 'length')"))).toBe('other');
    expect(classifySqlError(undefined)).toBe('other');
  });
});
