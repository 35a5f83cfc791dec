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

/** What waits in front of a new event: the router's two ingest lanes and the dispatcher's first attempts. */
export async function deliveryPathBacklog(admin: Admin, topics: TopicNames): Promise<number> {
  const lags = await Promise.all([
    groupLag(admin, `${topics.namespace}-router`, topics.ingest),
    groupLag(admin, `${topics.namespace}-router-overflow`, topics.ingestOverflow),
    groupLag(admin, `${topics.namespace}-dispatcher`, topics.deliveries),
  ]);
  return lags.reduce((sum, lag) => sum + lag, 0);
}
