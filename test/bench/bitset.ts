/**
 * A growable set of non-negative integers, one bit each. The generator numbers its
 * batches and messages consecutively, so "which batches were accepted" and "which messages
 * arrived" over millions of messages fit in a few hundred kilobytes and travel between
 * processes as base64.
 */
export class BitSet {
  private bytes: Uint8Array;
  /** Number of members. */
  size = 0;

  constructor(bytes: Uint8Array = new Uint8Array(1024)) {
    this.bytes = bytes;
    for (const byte of bytes) this.size += popCount(byte);
  }

  has(n: number): boolean {
    const index = n >>> 3;
    return index < this.bytes.length && (this.bytes[index]! & (1 << (n & 7))) !== 0;
  }

  /** Adds `n`; false when it was already a member. */
  add(n: number): boolean {
    const index = n >>> 3;
    if (index >= this.bytes.length) {
      const grown = new Uint8Array(Math.max(index + 1, this.bytes.length * 2));
      grown.set(this.bytes);
      this.bytes = grown;
    }
    const mask = 1 << (n & 7);
    if ((this.bytes[index]! & mask) !== 0) return false;
    this.bytes[index]! |= mask;
    this.size++;
    return true;
  }

  /** Members in ascending order. */
  *values(): IterableIterator<number> {
    for (let index = 0; index < this.bytes.length; index++) {
      const byte = this.bytes[index]!;
      if (byte === 0) continue;
      for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) yield index * 8 + bit;
    }
  }

  toBase64(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('base64');
  }

  static fromBase64(text: string): BitSet {
    return new BitSet(new Uint8Array(Buffer.from(text, 'base64')));
  }
}

function popCount(byte: number): number {
  let count = 0;
  for (let b = byte; b !== 0; b &= b - 1) count++;
  return count;
}
