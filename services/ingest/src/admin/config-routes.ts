/**
 * Sources, destinations and the declarative apply. Reads show write keys (clients need
 * them) and never secrets; writes answer once this process's config view holds them.
 */
import { z } from 'zod';
import type { Destination, Source } from '@tributary/schemas';
import { redactDestination, type EntityKind } from '@tributary/shared';
import { planApply, planDelete, planDestinationPut, planSourcePut } from './config-plan.js';
import { notFound, parseBody } from './errors.js';
import { ADMIN_PREFIX, type AdminRoutes } from './routes.js';

const byId = <T extends { id: string }>(entities: readonly T[]): T[] => [...entities].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

const applyRequest = z
  .object(
    {
      // An object, not merely present: `"document": null` once read as an empty document,
      // which with prune deleted every source and destination.
      document: z.unknown().superRefine((value, ctx) => {
        if (value === undefined) ctx.addIssue({ code: 'custom', message: 'is required' });
        else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          ctx.addIssue({ code: 'custom', message: 'must be an object with "sources" and "destinations" lists' });
        }
      }),
      dryRun: z.boolean({ error: 'must be true or false' }).optional(),
      prune: z.boolean({ error: 'must be true or false' }).optional(),
    },
    { error: 'must be an object with a "document"' },
  )
  .strict();

interface IdParams {
  Params: { id: string };
}

const location = (kind: EntityKind, id: string) => `${ADMIN_PREFIX}/${kind}s/${encodeURIComponent(id)}`;

export const configRoutes: AdminRoutes = (scope, { config }) => {
  const source = (id: string): Source => {
    const found = config.state().sources.find((candidate) => candidate.id === id);
    if (!found) throw notFound('source', id);
    return found;
  };
  const destination = (id: string): Destination => {
    const found = config.state().destinations.find((candidate) => candidate.id === id);
    if (!found) throw notFound('destination', id);
    return redactDestination(found);
  };

  scope.get('/config', async () => {
    const { sources, destinations } = config.state();
    return { sources: byId(sources), destinations: byId(destinations).map(redactDestination) };
  });

  scope.post('/config/apply', async (request) => {
    const { document, dryRun = false, prune = false } = parseBody(applyRequest, request.body, 'apply request');
    const { changes, written } = await config.commit((state) => planApply(state, document, { prune }), { dryRun });
    return { changes, applied: !dryRun, written };
  });

  scope.get('/sources', async () => ({ sources: byId(config.state().sources) }));

  scope.get<IdParams>('/sources/:id', async (request) => source(request.params.id));

  scope.post('/sources', async (request, reply) => {
    const { result } = await config.commit((state) => planSourcePut(state, request.body, 'create'));
    return reply.code(201).header('location', location('source', result.entity.id)).send(source(result.entity.id));
  });

  scope.put<IdParams>('/sources/:id', async (request, reply) => {
    const { result } = await config.commit((state) => planSourcePut(state, request.body, 'replace', request.params.id));
    return reply.code(result.created ? 201 : 200).send(source(result.entity.id));
  });

  scope.delete<IdParams>('/sources/:id', async (request, reply) => {
    await config.commit((state) => planDelete(state, 'source', request.params.id));
    return reply.code(204).send();
  });

  scope.get('/destinations', async () => ({ destinations: byId(config.state().destinations).map(redactDestination) }));

  scope.get<IdParams>('/destinations/:id', async (request) => destination(request.params.id));

  scope.post('/destinations', async (request, reply) => {
    const { result } = await config.commit((state) => planDestinationPut(state, request.body, 'create'));
    return reply.code(201).header('location', location('destination', result.entity.id)).send(destination(result.entity.id));
  });

  scope.put<IdParams>('/destinations/:id', async (request, reply) => {
    const { result } = await config.commit((state) => planDestinationPut(state, request.body, 'replace', request.params.id));
    return reply.code(result.created ? 201 : 200).send(destination(result.entity.id));
  });

  scope.delete<IdParams>('/destinations/:id', async (request, reply) => {
    await config.commit((state) => planDelete(state, 'destination', request.params.id));
    return reply.code(204).send();
  });
};
