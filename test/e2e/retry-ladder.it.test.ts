/**
 * Issue 6, "must show", through all four services with a real receiver; the source and
 * destination are created through the admin API and messages sent with the Segment Node
 * library, as a user would:
 *
 * - a receiver answering 500, 500, then 200 gets the message exactly three times, the
 *   retries spaced by the ladder's delays (and the scheduler releasing none early), and
 *   then no more;
 * - with a ladder scaled to milliseconds and a receiver that always answers 503, every
 *   attempt falls inside the window and exactly one `expired` dead letter follows per
 *   message;
 * - once the receiver is healthy, `tributary dlq replay` delivers those messages once,
 *   and running it again replays nothing.
 *
 * The SIGKILL case (a scheduler killed while holding due and not-yet-due records) is
 * services/retry-scheduler/test/restart.it.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryRecord } from '@tributary/schemas';
import { eventually, readTopicToEnd, testCodec, testKafka, uniqueNamespace } from '@tributary/test/harness';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

/** Longer than any delay of the millisecond ladder below: a retry that was going to come has come by then. */
const SETTLE_MS = 3_000;

describe('a receiver that fails twice, then succeeds', () => {
  // The second step ten times the first: a retry that took the first step's tier stands clear of
  // one that waited a step longer, however slowly the pipeline moves the retry in between.
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-ladder'), { RETRY_LADDER: '500ms,5s', RETRY_WINDOW: '1m' });
  /** Longer than this ladder's longest delay. */
  const settleMs = 6_000;
  const receiver = new Receiver((_messageId, attempt) => (attempt <= 2 ? 500 : 200));

  beforeAll(async () => {
    await receiver.start();
    await pipeline.start();
  });

  afterAll(async () => {
    await pipeline.stop();
    await receiver.stop();
  });

  it('gets the message three times, spaced by the ladder, and then never again', { timeout: 60_000 }, async () => {
    const writeKey = await pipeline.connect('flaky', receiver.url);
    const [messageId] = await pipeline.track(writeKey, 1);
    await eventually(() => receiver.attemptsFor(messageId!).some((attempt) => attempt.status === 200), 'the third attempt', 30_000);
    await new Promise((resolve) => setTimeout(resolve, settleMs));

    const attempts = receiver.attemptsFor(messageId!);
    expect(attempts.map((attempt) => attempt.status)).toEqual([500, 500, 200]);
    const [first, second, third] = attempts.map((attempt) => attempt.at) as [number, number, number];
    // The first retry waits the first delay (500 ms, about 560 ms in all) and comes from the
    // 500ms tier, not the 5s one; the second waits the second delay.
    expect(second - first).toBeGreaterThanOrEqual(500);
    expect(second - first).toBeLessThan(5_000);
    expect(third - second).toBeGreaterThanOrEqual(5_000);

    // One retry record per tier, in ladder order, each attempt made no earlier than its due time.
    const codec = testCodec();
    const retries: RetryRecord[] = [];
    for (const tier of ['500ms', '5s']) {
      for (const { message } of await readTopicToEnd(testKafka(), pipeline.topics.retry(tier))) retries.push(await codec.decode<RetryRecord>('retry', message.value!));
    }
    expect(retries.map((retry) => [retry.tier, retry.delivery.attempts, retry.delivery.lastStatus])).toEqual([
      ['500ms', 1, 500],
      ['5s', 2, 500],
    ]);
    expect(second).toBeGreaterThanOrEqual(retries[0]!.dueAt);
    expect(third).toBeGreaterThanOrEqual(retries[1]!.dueAt);
    expect(pipeline.deadLetters!.records).toEqual([]);
    console.info(`[e2e retry] attempts at +0, +${second - first} ms, +${third - first} ms (ladder 500ms, 5s)`);
  });
});

describe('a receiver that always answers 503, on a ladder scaled to milliseconds', () => {
  const WINDOW_MS = 3_000;
  // The ladder alone, as if the destination's circuit never opened (with it, a receiver that
  // always fails gets a few attempts and deferrals instead: test/e2e/destination-health).
  const pipeline = new RetryPipeline(
    uniqueNamespace('e2e-expiry'),
    { RETRY_LADDER: '100ms,200ms,400ms,800ms,1600ms', RETRY_WINDOW: '3s' },
    { CIRCUIT_FAILURES: '1000000', CIRCUIT_MIN_REQUESTS: '1000000' },
  );
  const receiver = new Receiver(() => 503);
  let writeKey: string;
  let messageIds: string[];

  beforeAll(async () => {
    await receiver.start();
    await pipeline.start();
    writeKey = await pipeline.connect('down', receiver.url);
  });

  afterAll(async () => {
    await pipeline.stop();
    await receiver.stop();
  });

  it('attempts every message inside the window, then writes exactly one expired dead letter for it', { timeout: 60_000 }, async () => {
    messageIds = await pipeline.track(writeKey, 3);
    const deadLetters = pipeline.deadLetters!;
    await deadLetters.waitFor((records) => messageIds.every((id) => records.some((letter) => letter.delivery.messageId === id)), 30_000, 'a dead letter per message');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    for (const messageId of messageIds) {
      const letters = deadLetters.records.filter((letter) => letter.delivery.messageId === messageId);
      expect(letters.map((letter) => [letter.reason, letter.status])).toEqual([['expired', 503]]);
      const [letter] = letters;
      const attempts = receiver.attemptsFor(messageId);
      // The ladder gives attempts at about 0, 0.1, 0.3, 0.7 and 1.5 s; the next would be at 3.1 s.
      expect(attempts.length).toBeGreaterThanOrEqual(4);
      expect(letter!.delivery.attempts).toBe(attempts.length);
      const windowEnd = letter!.delivery.firstAttemptAt! + WINDOW_MS;
      expect(attempts.filter((attempt) => attempt.at > windowEnd)).toEqual([]);
      expect(attempts[0]!.at).toBeGreaterThanOrEqual(letter!.delivery.firstAttemptAt!);
      console.info(`[e2e expiry] ${messageId}: attempts at ${attempts.map((attempt) => `+${attempt.at - letter!.delivery.firstAttemptAt!}`).join(', ')} ms; dead at +${letter!.deadAt - letter!.delivery.firstAttemptAt!} ms`);
    }
  });

  it('delivers the dead letters once through `tributary dlq replay` when the receiver is healthy, and never twice', { timeout: 60_000 }, async () => {
    receiver.answer = () => 200;
    const before = receiver.attempts.length;

    const listed = await pipeline.cli(['dlq', 'list', '--destination', 'down', '--reason', 'expired']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('3 matching dead letters, newest first');

    const replay = await pipeline.cli(['dlq', 'replay', '--destination', 'down', '--since', '10m']);
    expect(replay).toEqual({ code: 0, stdout: 'replayed 3 of 3 matching dead letters of down (0 already replayed, skipped)\n', stderr: '' });
    await eventually(() => messageIds.every((id) => receiver.attemptsFor(id).some((attempt) => attempt.status === 200)), 'the replayed deliveries', 30_000);

    const again = await pipeline.cli(['dlq', 'replay', '--destination', 'down']);
    expect(again.stdout).toBe('replayed 0 of 3 matching dead letters of down (3 already replayed, skipped)\n');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    const afterReplay = receiver.attempts.slice(before);
    expect(afterReplay.map((attempt) => [attempt.messageId, attempt.status]).sort()).toEqual(messageIds.map((id) => [id, 200]).sort());
    expect(pipeline.deadLetters!.records.length).toBe(3);

    const json = JSON.parse((await pipeline.cli(['dlq', 'list', '--json'])).stdout) as { deadLetters: Array<{ messageId: string; replayedAt: string | null }> };
    // The three dead letters are all listed (an empty listing would pass the `every`).
    expect(json.deadLetters.map((letter) => letter.messageId).sort()).toEqual([...messageIds].sort());
    expect(json.deadLetters.every((letter) => letter.replayedAt !== null)).toBe(true);
  });
});
