/**
 * A user deletion request (spec section 6): one `delete` message on the ingest topic per
 * affected source, so the router forwards one notification per source whose Webhooks
 * destinations are enabled and the receivers can start their own clean-up.
 */
import { z } from 'zod';
import type { IngestMessage } from '@tributary/schemas';
import { MAX_ID_LENGTH, type ConfigState } from '@tributary/shared';
import { invalid, parseBody } from './errors.js';
import { serverMessage } from './server-message.js';

export const deletionRequest = z
  .object(
    {
      userId: z
        .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
        .min(1, 'may not be empty')
        // The router's limit for any id (MAX_ID_LENGTH): a longer one was accepted here and its
        // notification quarantined there, never delivered.
        .max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`),
      sources: z
        .array(z.string({ error: 'must be a source id' }), { error: 'must be a list of source ids' })
        .min(1, 'needs at least one source id; leave it out to mean every source')
        .optional(),
    },
    { error: 'must be an object with a userId' },
  )
  .strict();

export interface DeletionPlan {
  userId: string;
  messages: IngestMessage[];
  /** Sources named in the request that get no message, and why. */
  skipped: Array<{ sourceId: string; reason: 'disabled' }>;
}

export function planDeletion(state: ConfigState, body: unknown, now: number, newMessageId: () => string): DeletionPlan {
  const request = parseBody(deletionRequest, body, 'deletion request');
  const byId = new Map(state.sources.map((source) => [source.id, source]));
  const issues = (request.sources ?? []).flatMap((sourceId, index) =>
    byId.has(sourceId) ? [] : [{ path: `sources[${index}]`, message: `unknown source "${sourceId}"` }],
  );
  if (issues.length > 0) throw invalid('deletion request', issues);
  const named = request.sources ? [...new Set(request.sources)] : [...byId.keys()].sort();
  const plan: DeletionPlan = { userId: request.userId, messages: [], skipped: [] };
  for (const sourceId of named) {
    if (!byId.get(sourceId)!.enabled) {
      // Without a request naming it, a disabled source is simply not affected.
      if (request.sources) plan.skipped.push({ sourceId, reason: 'disabled' });
      continue;
    }
    plan.messages.push(serverMessage({ messageId: newMessageId(), type: 'delete', sourceId, userId: request.userId }, now));
  }
  return plan;
}
