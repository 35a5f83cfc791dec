/**
 * Offset bookkeeping for one partition while its deliveries settle out of order. The
 * offset to commit is the lowest offset whose outcome is not yet durable (or, when every
 * read record is settled, the one after the last read), so a crash never skips a record
 * whose success, retry record or dead letter was not recorded. Pure.
 */
export class PartitionProgress {
  /** Offsets read and not yet settled, in read order (offsets only grow). */
  private pending: bigint[] = [];
  private head = 0;
  private readonly settledEarly = new Set<bigint>();
  /** Highest offset read (or skipped as a control record); -1n before the first. */
  private lastRead: bigint;
  private committed: bigint;

  constructor(readonly partition: number, firstOffset: bigint) {
    this.lastRead = firstOffset - 1n;
    this.committed = firstOffset;
  }

  /** Whether `offset` was already read by this owner of the partition (a re-fetch after a rebalance). */
  hasRead(offset: bigint): boolean {
    return offset <= this.lastRead;
  }

  read(offset: bigint): void {
    if (offset <= this.lastRead) throw new Error(`offset ${offset} of partition ${this.partition} was already read`);
    this.pending.push(offset);
    this.lastRead = offset;
  }

  /** Marks offsets up to `offset` as read even without a record (transaction markers at a batch's end). */
  readUpTo(offset: bigint): void {
    if (offset > this.lastRead) this.lastRead = offset;
  }

  settle(offset: bigint): void {
    this.settledEarly.add(offset);
    while (this.head < this.pending.length && this.settledEarly.delete(this.pending[this.head]!)) this.head++;
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
  }

  get unsettled(): number {
    return this.pending.length - this.head;
  }

  /** The offset a commit should carry now (the next record to read after a restart). */
  commitPoint(): bigint {
    return this.head < this.pending.length ? this.pending[this.head]! : this.lastRead + 1n;
  }

  /** The commit point when it moved past the last committed one, else undefined. */
  uncommitted(): bigint | undefined {
    const point = this.commitPoint();
    return point > this.committed ? point : undefined;
  }

  markCommitted(offset: bigint): void {
    if (offset > this.committed) this.committed = offset;
  }
}
