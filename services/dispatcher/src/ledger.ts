/**
 * What one partition owes Kafka while its deliveries settle out of order. Pure.
 *
 * Each delivery read is an entry; when it settles it brings the records its outcome must
 * write (a retry record or dead letter, its attempt-log record). Those records are written
 * only together with a consumed offset that passes the delivery, in one transaction — so
 * after a crash a delivery is either read again and nothing of its outcome was written, or
 * its outcome was written and it is never read again. (Writing an outcome as soon as it is
 * known and committing the offset later, as an earlier version did, let a crash in between
 * start a second retry chain and a second dead letter.)
 *
 * `take` hands out the run of settled entries at the front, up to a byte budget, with the
 * offset to commit; `confirm` or `restore` follows once that transaction's fate is known.
 * One batch is out at a time.
 */
export interface Output {
  topic: string;
  key: string;
  /** null: a tombstone (compacted topics). */
  value: Buffer | null;
}

interface Entry {
  offset: bigint;
  settled: boolean;
  outputs: Output[];
  bytes: number;
}

export interface LedgerBatch {
  topic: string;
  partition: number;
  outputs: Output[];
  /** The offset to commit: the next record to read after a restart. */
  nextOffset: bigint;
  /** Settled records were left out for want of room (`maxBytes`): they could go at once. */
  full: boolean;
}

export function outputBytes(output: Output): number {
  return output.key.length + (output.value?.length ?? 0);
}

export class PartitionLedger {
  private entries: Entry[] = [];
  /** entries[0 … confirmedUpTo) were committed and are dropped lazily; [… takenUpTo) are in a transaction. */
  private confirmedUpTo = 0;
  private takenUpTo = 0;
  private readonly byOffset = new Map<bigint, Entry>();
  private inTransit: LedgerBatch | undefined;
  /** Highest offset read (or passed as a control record); firstOffset − 1 before the first. */
  private lastRead: bigint;
  private committed: bigint;
  private unsettledCount = 0;
  private stagedBytesCount = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
    firstOffset: bigint,
  ) {
    this.lastRead = firstOffset - 1n;
    this.committed = firstOffset;
  }

  /** Whether `offset` was already read by this owner of the partition (a re-fetch after a rebalance). */
  hasRead(offset: bigint): boolean {
    return offset <= this.lastRead;
  }

  read(offset: bigint): void {
    if (offset <= this.lastRead) throw new Error(`offset ${offset} of ${this.topic}[${this.partition}] was already read`);
    const entry: Entry = { offset, settled: false, outputs: [], bytes: 0 };
    this.entries.push(entry);
    this.byOffset.set(offset, entry);
    this.lastRead = offset;
    this.unsettledCount++;
  }

  /** Marks offsets up to `offset` as passed even without a record (transaction markers at a batch's end). */
  readUpTo(offset: bigint): void {
    if (offset > this.lastRead) this.lastRead = offset;
  }

  /** The delivery at `offset` is settled; `outputs` are what its outcome writes. */
  settle(offset: bigint, outputs: Output[]): void {
    const entry = this.byOffset.get(offset);
    if (!entry || entry.settled) throw new Error(`offset ${offset} of ${this.topic}[${this.partition}] is not awaiting settlement`);
    entry.settled = true;
    entry.outputs = outputs;
    for (const output of outputs) entry.bytes += outputBytes(output);
    this.unsettledCount--;
    this.stagedBytesCount += entry.bytes;
  }

  /** Deliveries read and not yet settled. */
  get unsettled(): number {
    return this.unsettledCount;
  }

  /** Bytes of outcome records settled but not yet committed. */
  get stagedBytes(): number {
    return this.stagedBytesCount;
  }

  /**
   * The outcome records of the settled run at the front (at least one entry, then up to
   * `maxBytes`) and the offset to commit with them; undefined when the commit point has not
   * moved. Everything read up to the commit point is covered, including control records.
   */
  take(maxBytes: number): LedgerBatch | undefined {
    if (this.inTransit) throw new Error(`${this.topic}[${this.partition}] already has a batch in a transaction`);
    let index = this.takenUpTo;
    let bytes = 0;
    const outputs: Output[] = [];
    while (index < this.entries.length) {
      const entry = this.entries[index]!;
      if (!entry.settled || (index > this.takenUpTo && bytes + entry.bytes > maxBytes)) break;
      for (const output of entry.outputs) outputs.push(output);
      bytes += entry.bytes;
      index++;
    }
    const nextOffset = index < this.entries.length ? this.entries[index]!.offset : this.lastRead + 1n;
    if (nextOffset <= this.committed) return undefined;
    this.takenUpTo = index;
    const full = index < this.entries.length && this.entries[index]!.settled;
    this.inTransit = { topic: this.topic, partition: this.partition, outputs, nextOffset, full };
    return this.inTransit;
  }

  /** The batch handed out last was committed. */
  confirm(): void {
    const batch = this.inTransit;
    if (!batch) return;
    this.inTransit = undefined;
    for (let index = this.confirmedUpTo; index < this.takenUpTo; index++) {
      const entry = this.entries[index]!;
      this.byOffset.delete(entry.offset);
      this.stagedBytesCount -= entry.bytes;
    }
    this.confirmedUpTo = this.takenUpTo;
    this.committed = batch.nextOffset;
    if (this.confirmedUpTo > 1024 && this.confirmedUpTo * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.confirmedUpTo);
      this.takenUpTo -= this.confirmedUpTo;
      this.confirmedUpTo = 0;
    }
  }

  /** The batch handed out last was not committed: its records are taken again next time. */
  restore(): void {
    this.inTransit = undefined;
    this.takenUpTo = this.confirmedUpTo;
  }

  /** The offset committed by this owner (or the first it read from). */
  get committedOffset(): bigint {
    return this.committed;
  }
}
