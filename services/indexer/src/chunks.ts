/**
 * A fetched batch cut into the pieces written per database transaction: at most `maxRecords`
 * records and `maxBytes` bytes of keys and values each (a single larger record travels
 * alone), so a backlog of any size is indexed in bounded steps. Pure.
 */
export interface SizedRecord {
  key: Buffer | null;
  value: Buffer | null;
}

export function chunkRecords<R extends SizedRecord>(records: readonly R[], maxRecords: number, maxBytes: number): R[][] {
  const chunks: R[][] = [];
  let current: R[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = (record.key?.length ?? 0) + (record.value?.length ?? 0);
    if (current.length > 0 && (current.length >= maxRecords || bytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
