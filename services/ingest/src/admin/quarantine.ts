/**
 * The quarantine through the admin API: `GET /quarantine` lists the records services set
 * aside (undecodable, invalid, past a limit, too large to write), newest first, with where
 * each came from and why. The original bytes may hold personal data: they are shown
 * (base64) only when asked for with `value=true`.
 */
import { z } from 'zod';
import { TopicReadTimeout, type QuarantineStore, type StoredQuarantined } from '@tributary/shared';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, time } from './dlq.js';
import { AdminError, parseBody } from './errors.js';
import type { AdminRoutes } from './routes.js';

const listQuery = z
  .object({
    topic: z.string().min(1, 'may not be empty').max(249, 'is at most 249 characters').optional(),
    service: z.enum(['router', 'dispatcher', 'retry-scheduler'], { error: 'must be router, dispatcher or retry-scheduler' }).optional(),
    reason: z.string().min(1).max(64).optional(),
    since: time.optional(),
    limit: z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(MAX_LIST_LIMIT, `must be at most ${MAX_LIST_LIMIT}`).default(DEFAULT_LIST_LIMIT),
    value: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  })
  .strict();

export interface QuarantinedView {
  id: string;
  service: string;
  sourceTopic: string;
  sourcePartition: number;
  sourceOffset: number;
  reason: string;
  error: string;
  /** The original key as text (keys are ids). */
  key: string | null;
  valueSize: number;
  recordTimestamp: string;
  quarantinedAt: string;
  /** The original value (its first 64 KiB), base64, only with `value=true`. */
  value?: string | null;
}

const iso = (time: number) => new Date(time).toISOString();

export function quarantinedView({ partition, offset, record }: StoredQuarantined, withValue: boolean): QuarantinedView {
  const view: QuarantinedView = {
    id: `${partition}/${offset}`,
    service: record.service,
    sourceTopic: record.sourceTopic,
    sourcePartition: record.partition,
    sourceOffset: record.offset,
    reason: record.reason,
    error: record.error,
    key: record.key === null ? null : record.key.toString('utf8'),
    valueSize: record.valueSize,
    recordTimestamp: iso(record.recordTimestamp),
    quarantinedAt: iso(record.quarantinedAt),
  };
  if (withValue) view.value = record.value === null ? null : record.value.toString('base64');
  return view;
}

export class AdminQuarantine {
  constructor(private readonly store: QuarantineStore) {}

  async list(query: unknown): Promise<{ order: 'newest first'; matched: number; records: QuarantinedView[] }> {
    const { topic, service, reason, since, limit, value } = parseBody(listQuery, query, 'quarantine query');
    try {
      const listed = await this.store.list({ sourceTopic: topic, service, reason, since }, limit);
      return { order: 'newest first', matched: listed.matched, records: listed.records.map((entry) => quarantinedView(entry, value === 'true')) };
    } catch (error) {
      if (error instanceof TopicReadTimeout) throw new AdminError(503, 'kafka_unavailable', `${error.message}; retry, or narrow the request with since`);
      throw error;
    }
  }
}

export const quarantineRoutes: AdminRoutes = (scope, { quarantine }) => {
  scope.get('/quarantine', async (request) => quarantine.list(request.query));
};
