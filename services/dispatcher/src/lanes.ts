/**
 * The two lanes' bookkeeping: per lane, the ledgers of the partitions it owns and how much it
 * has read and not yet settled, in records and bytes — which decide when a lane may read
 * more. Pure.
 */
import type { DeliveryLane } from '@tributary/schemas';
import { PartitionLedger } from './ledger.js';
import type { OwnedLedger } from './outcome-writer.js';

export interface LaneLimits {
  /** Records read from one lane and not yet settled. */
  maxBuffered: number;
  maxBufferedBytes: number;
  /** Outcome records of both lanes settled and waiting for their transaction. */
  maxStagedBytes: number;
}

interface Lane {
  topic: string;
  groupId: string;
  ledgers: Map<number, PartitionLedger>;
  unsettled: number;
  unsettledBytes: number;
}

export const LANES: readonly DeliveryLane[] = ['first', 'retry'];

export class Lanes {
  private readonly lanes: Record<DeliveryLane, Lane>;

  constructor(
    private readonly limits: LaneLimits,
    sources: Record<DeliveryLane, { topic: string; groupId: string }>,
  ) {
    const lane = ({ topic, groupId }: { topic: string; groupId: string }): Lane => ({ topic, groupId, ledgers: new Map(), unsettled: 0, unsettledBytes: 0 });
    this.lanes = { first: lane(sources.first), retry: lane(sources.retry) };
  }

  hasRoom(lane: DeliveryLane): boolean {
    const state = this.lanes[lane];
    return state.unsettled < this.limits.maxBuffered && state.unsettledBytes < this.limits.maxBufferedBytes && this.stagedBytes() < this.limits.maxStagedBytes;
  }

  /** The ledger of a partition the lane owns, created on its first record. */
  ledger(lane: DeliveryLane, partition: number, firstOffset: bigint): PartitionLedger {
    const state = this.lanes[lane];
    let ledger = state.ledgers.get(partition);
    if (!ledger) {
      ledger = new PartitionLedger(state.topic, partition, firstOffset);
      state.ledgers.set(partition, ledger);
    }
    return ledger;
  }

  isCurrent(lane: DeliveryLane, ledger: PartitionLedger): boolean {
    return this.lanes[lane].ledgers.get(ledger.partition) === ledger;
  }

  /** Keeps the ledgers of `partitions` only; returns the dropped ones. */
  keepOnly(lane: DeliveryLane, partitions: number[]): PartitionLedger[] {
    const state = this.lanes[lane];
    const kept = new Set(partitions);
    const dropped: PartitionLedger[] = [];
    for (const [partition, ledger] of state.ledgers) {
      if (kept.has(partition)) continue;
      state.ledgers.delete(partition);
      dropped.push(ledger);
    }
    return dropped;
  }

  /** A record of `bytes` was read and waits to settle. */
  read(lane: DeliveryLane, bytes: number): void {
    this.lanes[lane].unsettled++;
    this.lanes[lane].unsettledBytes += bytes;
  }

  /** A record read was settled, or abandoned. */
  release(lane: DeliveryLane, bytes: number): void {
    this.lanes[lane].unsettled--;
    this.lanes[lane].unsettledBytes -= bytes;
  }

  /** How full the lane's buffer is: the larger of its records and bytes, as a share of their bounds. */
  fill(lane: DeliveryLane): number {
    const state = this.lanes[lane];
    return Math.max(state.unsettled / this.limits.maxBuffered, state.unsettledBytes / this.limits.maxBufferedBytes);
  }

  buffered(lane: DeliveryLane): { records: number; bytes: number } {
    return { records: this.lanes[lane].unsettled, bytes: this.lanes[lane].unsettledBytes };
  }

  stagedBytes(): number {
    let total = 0;
    for (const lane of LANES) for (const ledger of this.lanes[lane].ledgers.values()) total += ledger.stagedBytes;
    return total;
  }

  *owned(): Iterable<OwnedLedger> {
    for (const lane of LANES) for (const ledger of this.lanes[lane].ledgers.values()) yield { ledger, groupId: this.lanes[lane].groupId };
  }
}
