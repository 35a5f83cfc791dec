import { describe, expect, it } from 'vitest';
import { formatQuarantine } from './quarantine.js';

describe('formatQuarantine', () => {
  it('prints a row per record with its error beneath, and what the limit left out', () => {
    const lines = formatQuarantine({
      order: 'newest first',
      matched: 3,
      records: [
        {
          id: '0/7',
          service: 'router',
          sourceTopic: 'tributary.ingest.v1',
          sourcePartition: 2,
          sourceOffset: 41,
          reason: 'too_deep',
          error: 'properties nests more than 64 levels deep',
          key: 'anon-1',
          valueSize: 30_000,
          quarantinedAt: '2026-11-24T10:00:00.000Z',
        },
      ],
    });
    expect(lines[0]).toMatch(/^QUARANTINED AT\s+SERVICE\s+FROM\s+REASON\s+KEY\s+BYTES\s+ID$/);
    expect(lines[1]).toMatch(/^2026-11-24T10:00:00.000Z\s+router\s+tributary\.ingest\.v1\[2\]@41\s+too_deep\s+anon-1\s+30000\s+0\/7$/);
    expect(lines[2]).toBe('  properties nests more than 64 levels deep');
    expect(lines[3]).toBe('1 of 3 matching records, newest first; --limit shows more');
  });

  it('says so when nothing matches', () => {
    expect(formatQuarantine({ order: 'newest first', matched: 0, records: [] })).toEqual(['nothing quarantined matches']);
  });
});
