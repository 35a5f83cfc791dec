import type { ApiError } from '@tributary/shared/segment';

/**
 * A call ingest's HTTP API would have refused (bad field, too large, too deep, unknown or
 * disabled write key): nothing of it was written. `status`, `code`, `message` and `details`
 * are what the HTTP API answers in its 4xx body.
 */
export class RefusedError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(error: ApiError) {
    super(error.error);
    this.name = 'RefusedError';
    this.status = error.status;
    this.code = error.code;
    this.details = error.details;
  }
}

/**
 * Kafka did not confirm the write: the producer is closed, too much is waiting for Kafka
 * (`mayBeWritten` false: nothing was written), or the transaction timed out or failed at
 * commit (`mayBeWritten` true). Sending the same messages again with these `messageIds`
 * is safe: the router forwards a messageId once per source.
 */
export class SendFailedError extends Error {
  constructor(
    message: string,
    readonly messageIds: readonly string[],
    readonly mayBeWritten: boolean,
    options?: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'SendFailedError';
  }
}
