/**
 * A value in the Confluent wire format — magic byte 0, the 4-byte schema id, the Avro binary —
 * encoded once, straight behind its header, into a buffer reused from record to record, then
 * copied out at its exact size (from Node's pool when small).
 *
 * Why not `type.toBuffer`: avsc encodes into a shared 1 KB buffer and, when a value does not fit,
 * encodes it a second time into a zero-filled buffer of its exact size, which the header was
 * then concatenated in front of — every record paid a zero-fill and two allocations, and every
 * record over 1 KB (a delivery with a full Segment context) two encodings.
 */
import type avro from 'avsc';

export const MAGIC_BYTE = 0;
export const HEADER_BYTES = 5;

/** The encoding buffer: grows to the largest value framed, never shrinks (one per process). */
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/** Throws as `type.toBuffer` does when the value does not match the type. */
export function frameAvro(type: avro.Type, schemaId: number, value: unknown): Buffer {
  let end = type.encode(value, scratch, HEADER_BYTES);
  if (end < 0) {
    // avsc counted the bytes it could not write (as -end) without writing past the buffer.
    scratch = Buffer.allocUnsafeSlow(Math.max(2 * scratch.length, scratch.length - end));
    end = type.encode(value, scratch, HEADER_BYTES);
  }
  scratch.writeUInt8(MAGIC_BYTE, 0);
  scratch.writeUInt32BE(schemaId, 1);
  return Buffer.from(scratch.subarray(0, end));
}
