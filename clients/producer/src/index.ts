export { TributaryProducer, type ProducerOptions, type Sent } from './producer.js';
export { RefusedError, SendFailedError } from './errors.js';
export type * from './messages.js';
