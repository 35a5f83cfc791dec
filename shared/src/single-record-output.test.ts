import { describe, expect, it } from 'vitest';
import { KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { forgotTheProducer } from './single-record-output.js';

describe('forgotTheProducer', () => {
  const protocolError = (type: string) => new KafkaJSProtocolError(Object.assign(new Error(type), { type, code: 0, retriable: false }));
  // As kafkajs's retrier wraps a non-retriable error (its typings omit the metadata argument).
  const Wrapper = KafkaJSNonRetriableError as unknown as new (e: Error, metadata: { cause: Error }) => Error;
  const wrapped = (error: Error) => new Wrapper(error, { cause: error });

  it('knows the refusals of a broker that lost the producer, as kafkajs throws them: wrapped by its retrier, or not', () => {
    for (const type of ['UNKNOWN_PRODUCER_ID', 'OUT_OF_ORDER_SEQUENCE_NUMBER']) {
      expect(forgotTheProducer(protocolError(type))).toBe(true);
      expect(forgotTheProducer(wrapped(protocolError(type)))).toBe(true);
    }
  });

  it('takes nothing else for it', () => {
    expect(forgotTheProducer(protocolError('MESSAGE_TOO_LARGE'))).toBe(false);
    expect(forgotTheProducer(wrapped(protocolError('TOPIC_AUTHORIZATION_FAILED')))).toBe(false);
    expect(forgotTheProducer(new Error('UNKNOWN_PRODUCER_ID'))).toBe(false);
    expect(forgotTheProducer(undefined)).toBe(false);
    expect(forgotTheProducer('UNKNOWN_PRODUCER_ID')).toBe(false);
  });
});
