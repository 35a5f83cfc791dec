import { describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import { createLogger } from '@tributary/shared';
import { RetentionSweeper } from './retention.js';

describe('RetentionSweeper', () => {
  it('deletes in bounded batches until a batch comes back short, from now minus the retention', async () => {
    const cutoffs: number[] = [];
    const remaining = { attempts: 12, messages: 3, deliveries: 0 };
    const store = {
      async deleteExpired(cutoff: number, batch: number) {
        cutoffs.push(cutoff);
        const take = (table: keyof typeof remaining) => {
          const count = Math.min(batch, remaining[table]);
          remaining[table] -= count;
          return count;
        };
        return { attempts: take('attempts'), messages: take('messages'), deliveries: take('deliveries') };
      },
    };
    const registry = new Registry();
    const retentionDeleted = new Counter({ name: 'deleted', help: 'h', labelNames: ['table'], registers: [registry] });
    const sweeper = new RetentionSweeper({ store, retentionMs: 1000, batchSize: 5, pauseMs: 0, now: () => 10_000, logger: createLogger({ service: 'test', level: 'silent' }), metrics: { retentionDeleted } });
    expect(await sweeper.sweep()).toEqual({ attempts: 12, messages: 3, deliveries: 0 });
    expect(cutoffs).toEqual([9000, 9000, 9000]);
    expect((await retentionDeleted.get()).values.find((v) => v.labels.table === 'attempts')?.value).toBe(12);
  });
});
