import { describe, expect, it } from 'vitest';
import { attemptSearchSql, retentionDeleteSql, summarySql, tailSql, timelineSql, waitingSql } from './queries.js';

const range = { since: 1000, until: 2000 };
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('attemptSearchSql', () => {
  it('filters by time only, by default, newest first, one row more than the page', () => {
    const { text, params } = attemptSearchSql({ ...range, limit: 50 });
    expect(squash(text)).toMatch(/WHERE started_at >= \$1::bigint AND started_at < \$2::bigint ORDER BY started_at DESC, kafka_partition DESC, kafka_offset DESC LIMIT \$3::integer$/);
    expect(params).toEqual([1000, 2000, 51]);
  });

  it('adds each filter as a parameter, and the cursor as a row comparison on the index order', () => {
    const { text, params } = attemptSearchSql({
      ...range,
      limit: 10,
      destination: "crm'; drop table attempts; --",
      source: 'web',
      userId: 'u',
      messageId: 'm',
      status: { kind: 'class', from: 500, to: 600 },
      cursor: { startedAt: 1500, partition: 1, offset: 9 },
    });
    expect(squash(text)).toContain('destination_id = $3 AND source_id = $4 AND user_id = $5 AND message_id = $6 AND status >= $7::integer AND status < $8::integer');
    expect(squash(text)).toContain('(started_at, kafka_partition, kafka_offset) < ($9::bigint, $10::integer, $11::bigint)');
    expect(text).not.toContain('drop table');
    expect(params).toEqual([1000, 2000, "crm'; drop table attempts; --", 'web', 'u', 'm', 500, 600, 1500, 1, 9, 11]);
  });

  it('reads status as an outcome, a status or no status at all', () => {
    expect(attemptSearchSql({ ...range, limit: 1, status: { kind: 'outcome', outcome: 'dead' } }).text).toContain('outcome = $3');
    expect(attemptSearchSql({ ...range, limit: 1, status: { kind: 'status', status: 429 } }).params).toContain(429);
    expect(attemptSearchSql({ ...range, limit: 1, status: { kind: 'error' } }).text).toContain("kind = 'attempt' AND status IS NULL");
  });
});

describe('the other queries', () => {
  it('tail after a cursor, per source', () => {
    expect(squash(tailSql({ limit: 5 }).text)).toMatch(/FROM messages ORDER BY seq DESC LIMIT \$1::integer$/);
    const { text, params } = tailSql({ source: 'web', after: 7, limit: 5 });
    expect(squash(text)).toContain('WHERE source_id = $1 AND seq > $2::bigint ORDER BY seq DESC');
    expect(params).toEqual(['web', 7, 5]);
  });

  it('summarise with percentile_cont, grouped per destination or for one', () => {
    expect(summarySql(range).text).toContain('percentile_cont(0.95) WITHIN GROUP (ORDER BY started_at + duration_ms - received_at)');
    expect(summarySql(range, 'crm').params).toEqual([1000, 2000, 'crm']);
    expect(waitingSql('crm').text).toContain("state IN ('retrying', 'deferred') AND destination_id = $1");
  });

  it('bucket from the aligned origin', () => {
    const { text, params } = timelineSql({ since: 1000, until: 2000, origin: 0, bucketMs: 500, buckets: 4 }, 'crm');
    expect(squash(text)).toContain('((started_at - $4::bigint) / $5::bigint)::integer AS bucket');
    expect(params).toEqual(['crm', 1000, 2000, 0, 500]);
  });

  it('delete retention in bounded batches by primary key', () => {
    expect(retentionDeleteSql('attempts', 99, 10)).toEqual({
      text: 'DELETE FROM attempts WHERE (message_id, kafka_partition, kafka_offset) IN (SELECT message_id, kafka_partition, kafka_offset FROM attempts WHERE started_at < $1::bigint LIMIT $2::integer)',
      params: [99, 10],
    });
  });
});
