/**
 * Lost and duplicated messages, from what the generator was told (which batches got a 200)
 * and what the receiver saw (which messages arrived). Message `n` of batch `b` has the
 * sequence number `b * batchSize + n` (see messages.ts).
 */
import type { BitSet } from './bitset.js';

export interface Reconciliation {
  acceptedMessages: number;
  /** Distinct messages of accepted batches that reached the receiver. */
  deliveredOfAccepted: number;
  /** Accepted (200) and never delivered: must be 0. */
  lost: number;
  /** Up to 10 sequence numbers of lost messages, for looking them up. */
  lostSample: number[];
  /**
   * Delivered although their request was not answered 200 (a 503 after the transaction had
   * begun may still commit, as ingest's README says). Not an error.
   */
  deliveredUnacknowledged: number;
}

export function reconcile(acceptedBatches: BitSet, delivered: BitSet, batchSize: number): Reconciliation {
  let deliveredOfAccepted = 0;
  const lostSample: number[] = [];
  for (const batch of acceptedBatches.values()) {
    for (let n = 0; n < batchSize; n++) {
      const seq = batch * batchSize + n;
      if (delivered.has(seq)) deliveredOfAccepted++;
      else if (lostSample.length < 10) lostSample.push(seq);
    }
  }
  const acceptedMessages = acceptedBatches.size * batchSize;
  return {
    acceptedMessages,
    deliveredOfAccepted,
    lost: acceptedMessages - deliveredOfAccepted,
    lostSample,
    deliveredUnacknowledged: delivered.size - deliveredOfAccepted,
  };
}
