/**
 * `GET /destination-health` (every configured destination) and
 * `GET /destinations/{id}/health` (one; the list is not `/destinations/health`, which would
 * shadow a destination named "health"): each destination's circuit state and backlog as the
 * dispatchers publish them (destination-health.ts). No secrets are involved.
 */
import { notFound } from './errors.js';
import type { AdminRoutes } from './routes.js';
import { summarise } from './destination-health.js';

export const healthRoutes: AdminRoutes = (scope, { config, health }) => {
  scope.get('/destination-health', async () => {
    const now = Date.now();
    return { destinations: config.state().destinations.map((destination) => summarise(destination.id, health.views(destination.id), now)) };
  });
  scope.get<{ Params: { id: string } }>('/destinations/:id/health', async (request) => {
    const { id } = request.params;
    const views = health.views(id);
    // A deleted destination may still have deliveries settling somewhere: its views are shown.
    if (views.length === 0 && !config.state().destinations.some((destination) => destination.id === id)) throw notFound('destination', id);
    return summarise(id, views, Date.now());
  });
};
