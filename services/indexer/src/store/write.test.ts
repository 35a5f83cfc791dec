import { describe, expect, it } from 'vitest';
import { attemptRow, foldDeliveryStates } from '../rows.js';
import { binaryArray } from '../sql/binary-array.js';
import { testAttempt } from '../test-records.js';
import { insertAttempts, unnestInsert, upsertDeliveryStates } from './write.js';

describe('unnestInsert', () => {
  it('sends each column as one binary array, whatever the number of rows', () => {
    const statement = unnestInsert(
      't',
      [
        { name: 'a', type: 'text', value: (row: { a: string; j: object }) => row.a },
        { name: 'j', type: 'json', value: (row: { a: string; j: object }) => row.j },
      ],
      [
        { a: 'x', j: { k: 1 } },
        { a: 'y', j: { k: '\u0000' } },
      ],
      'ON CONFLICT DO NOTHING',
    );
    expect(statement.text).toBe('INSERT INTO t (a, j) SELECT u.a, u.j::json FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(a, j, ord) ORDER BY u.ord ON CONFLICT DO NOTHING');
    expect(statement.params).toEqual([
      binaryArray('text', ['x', 'y']),
      // Kept as JSON.stringify writes it: a json column takes the escaped NUL as it is.
      binaryArray('text', ['{"k":1}', '{"k":"\\u0000"}']),
    ]);
  });

  it('writes attempts once and delivery states only forward', () => {
    const rows = [attemptRow(testAttempt({ messageId: 'm', destinationId: 'd' }), 0, 1)];
    const attempts = insertAttempts(rows);
    expect(attempts.params).toHaveLength(24);
    expect(attempts.text).toMatch(/ON CONFLICT \(message_id, kafka_partition, kafka_offset\) DO NOTHING$/);
    const states = upsertDeliveryStates(foldDeliveryStates(rows));
    expect(states.text).toMatch(/DO UPDATE SET/);
    expect(states.text).toMatch(/EXCLUDED\.last_offset > deliveries\.last_offset/);
  });
});
