/** Consumer-group lag read from the broker, for the bench's judgement of a backlog. */
import type { Admin } from 'kafkajs';
import type { TopicNames } from '@tributary/schemas';

/** Records of `topic` the group has not committed past (a group that never committed: all of them). */
export async function groupLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const ends = await admin.fetchTopicOffsets(topic);
  let lag = 0;
  for (const end of ends) {
    const offset = Number(committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
    lag += Number(end.high) - (offset >= 0 ? offset : Number(end.low));
  }
  return lag;
}

/**
 * Consumer lag, in records, below which a consumer that trails delivery (the delivery log's
 * indexer) counts as caught up: at rest committed offsets trail by about a transaction's worth.
 */
export const SETTLED_LAG_RECORDS = 1_000;

/**
 * Measures every half second until `measure()` is at most `limit` or `timeoutMs` has passed:
 * how long that took, and the last measure (over `limit` when it timed out).
 */
export async function waitUntilAtMost(measure: () => Promise<number>, limit: number, timeoutMs: number): Promise<{ waitedMs: number; last: number }> {
  const started = Date.now();
  let last = await measure();
  while (last > limit && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = await measure();
  }
  return { waitedMs: Date.now() - started, last };
}

/** Records the delivery log's indexer has not committed past, over the three topics it reads. */
export async function indexerLag(admin: Admin, topics: TopicNames): Promise<number> {
  const groupId = `${topics.namespace}-indexer`;
  const lags = await Promise.all([topics.ingest, topics.ingestOverflow, topics.attempts].map((topic) => groupLag(admin, groupId, topic)));
  return lags.reduce((sum, lag) => sum + lag, 0);
}

/** Records waiting at each step of the delivery path that a new event passes. */
export interface PathBacklog {
  routerMain: number;
  routerOverflow: number;
  dispatcherFirst: number;
}

export async function pathBacklog(admin: Admin, topics: TopicNames): Promise<PathBacklog> {
  const [routerMain, routerOverflow, dispatcherFirst] = await Promise.all([
    groupLag(admin, `${topics.namespace}-router`, topics.ingest),
    groupLag(admin, `${topics.namespace}-router-overflow`, topics.ingestOverflow),
    groupLag(admin, `${topics.namespace}-dispatcher`, topics.deliveries),
  ]);
  return { routerMain, routerOverflow, dispatcherFirst };
}

/** What waits in front of a new event: the router's two ingest lanes and the dispatcher's first attempts. */
export async function deliveryPathBacklog(admin: Admin, topics: TopicNames): Promise<number> {
  const { routerMain, routerOverflow, dispatcherFirst } = await pathBacklog(admin, topics);
  return routerMain + routerOverflow + dispatcherFirst;
}

/** The larger of each step's backlog. */
export function maxBacklog(a: PathBacklog, b: PathBacklog): PathBacklog {
  return { routerMain: Math.max(a.routerMain, b.routerMain), routerOverflow: Math.max(a.routerOverflow, b.routerOverflow), dispatcherFirst: Math.max(a.dispatcherFirst, b.dispatcherFirst) };
}
