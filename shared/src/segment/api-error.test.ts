import { describe, expect, it } from 'vitest';
import { errorBody, unavailable } from './api-error.js';

describe('errorBody', () => {
  it("repeats the sentence as message, which analytics-python reads from every non-2xx answer, and keeps the other fields", () => {
    expect(errorBody({ status: 400, code: 'validation_failed', error: 'message 0: track needs event', details: { errorCount: 1 } })).toEqual({
      success: false,
      error: 'message 0: track needs event',
      code: 'validation_failed',
      message: 'message 0: track needs event',
      errorCount: 1,
    });
    expect(errorBody(unavailable('retry shortly'))).toEqual({ success: false, error: 'retry shortly', code: 'unavailable', message: 'retry shortly' });
  });
});
