/**
 * Types for `analytics-node` 6.x, which ships none: the parts of its API the compat
 * driver uses, as its index.js defines them.
 */
declare module 'analytics-node' {
  namespace Analytics {
    interface Options {
      /** Base URL; the library posts to `${host}${path}`. */
      host?: string;
      /** Default `/v1/batch`. */
      path?: string;
      /** Messages per request (default 20). */
      flushAt?: number;
      /** Milliseconds before a partial batch is sent (default 10000). */
      flushInterval?: number;
      /** axios-retry attempts on network errors, 5xx and 429 (default 3). */
      retryCount?: number;
      /** Given a failed request's error instead of the flush promise rejecting. */
      errorHandler?: (error: Error) => void;
    }

    /** The object the library posts: the batch plus its own clock at sending time. */
    interface Payload {
      batch: Array<Record<string, unknown>>;
      timestamp: Date;
      sentAt: Date;
    }

    type Callback = (error: Error | undefined, payload: Payload) => void;
  }

  class Analytics {
    constructor(writeKey: string, options?: Analytics.Options);
    readonly host: string;
    readonly path: string;
    /** Messages waiting for the next flush. */
    queue: unknown[];
    identify(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    track(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    page(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    screen(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    group(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    alias(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    /** Sends up to `flushAt` queued messages. */
    flush(callback?: Analytics.Callback): Promise<Analytics.Payload | undefined>;
  }

  export = Analytics;
}
