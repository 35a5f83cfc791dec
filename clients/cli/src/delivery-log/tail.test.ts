import { describe, expect, it } from 'vitest';
import { CliError, EXIT_FAILED } from '../errors.js';
import type { TailPage } from './answers.js';
import { followTail, messageLabel, sleepUnlessAborted, TAIL_POLL_LIMIT, TailTable, whoOf, type FollowOptions } from './tail.js';
import { testTailMessage } from './test-answers.js';

describe('TailTable', () => {
  it('prints the header once and keeps the widths of the first messages', () => {
    const table = new TailTable();
    expect(table.lines([])).toEqual([]);
    expect(table.lines([testTailMessage(), testTailMessage({ messageId: 'm-2', type: 'page', event: null, message: { name: 'Pricing' }, userId: null, anonymousId: 'a-1' })])).toEqual([
      'RECEIVED AT               SOURCE      TYPE      EVENT                 USER                  MESSAGE ID',
      '2026-11-25T10:00:00.000Z  web         track     Signed Up             u-1                   m-1',
      '2026-11-25T10:00:00.000Z  web         page      Pricing               anon a-1              m-2',
    ]);
    expect(table.lines([testTailMessage({ messageId: 'm-3', type: 'identify', event: null, message: {} })])).toEqual([
      '2026-11-25T10:00:00.000Z  web         identify  identify              u-1                   m-3',
    ]);
  });

  it('names messages and people as the console does, escaping what producers sent', () => {
    expect(messageLabel({ type: 'track', event: 'Bad\u001b[0m', message: {} })).toBe('Bad\\u001b[0m');
    expect(messageLabel({ type: 'screen', event: null, message: { name: '' } })).toBe('screen');
    expect([whoOf({ userId: null, anonymousId: null }), whoOf({ userId: 'u-1', anonymousId: 'a-1' })]).toEqual(['-', 'u-1']);
  });
});

/** A scripted tail API: each request takes the next answer (a page, or an error to throw). */
function scripted(answers: Array<TailPage | Error>, signal = new AbortController()) {
  const requests: Array<{ after: string | undefined; limit: number }> = [];
  const printed: string[][] = [];
  const warnings: string[] = [];
  let sleeps = 0;
  const options: FollowOptions = {
    firstLimit: 20,
    once: false,
    signal: signal.signal,
    fetchPage: async (after, limit) => {
      requests.push({ after, limit });
      const answer = answers.shift();
      if (answers.length === 0) signal.abort();
      if (answer === undefined) throw new Error('asked once too often');
      if (answer instanceof Error) throw answer;
      return answer;
    },
    sleep: async () => {
      sleeps++;
    },
    print: (messages) => printed.push(messages.map((message) => message.messageId)),
    warn: (line) => warnings.push(line),
  };
  return { options, requests, printed, warnings, sleeps: () => sleeps };
}

const page = (cursor: string, ...ids: string[]): TailPage => ({ messages: ids.map((messageId) => testTailMessage({ messageId })), cursor });
const unavailable = () => new CliError('the delivery log cannot answer right now (the indexer is not reachable)', EXIT_FAILED, [], 503);

describe('followTail', () => {
  it('prints each answer oldest first and asks again with its cursor until interrupted', async () => {
    const tail = scripted([page('c1', 'm-3', 'm-2', 'm-1'), page('c1'), page('c2', 'm-5', 'm-4')]);
    await followTail(tail.options);
    expect(tail.printed).toEqual([['m-1', 'm-2', 'm-3'], [], ['m-4', 'm-5']]);
    expect(tail.requests).toEqual([
      { after: undefined, limit: 20 },
      { after: 'c1', limit: TAIL_POLL_LIMIT },
      { after: 'c1', limit: TAIL_POLL_LIMIT },
    ]);
    expect(tail.sleeps()).toBe(2);
    expect(tail.warnings).toEqual([]);
  });

  it('asks once with --once', async () => {
    const tail = scripted([page('c1', 'm-1'), page('c2', 'm-2')]);
    await followTail({ ...tail.options, once: true });
    expect(tail.printed).toEqual([['m-1']]);
    expect(tail.sleeps()).toBe(0);
  });

  it('waits out an outage of the delivery log, saying so once and when it is over', async () => {
    const tail = scripted([page('c1', 'm-1'), unavailable(), unavailable(), page('c2', 'm-2'), page('c2')]);
    await followTail(tail.options);
    expect(tail.printed).toEqual([['m-1'], ['m-2'], []]);
    expect(tail.requests.map((request) => request.after)).toEqual([undefined, 'c1', 'c1', 'c1', 'c2']);
    expect(tail.warnings).toEqual([expect.stringMatching(/^tail paused: the delivery log cannot answer right now .*; asking again every 1s/), 'tail resumed']);
  });

  it('ends on a failing first request and on any refusal', async () => {
    await expect(followTail(scripted([unavailable(), page('c1')]).options)).rejects.toThrow(/cannot answer/);
    const refused = new CliError('the admin token is not valid', EXIT_FAILED, [], 401);
    await expect(followTail(scripted([page('c1'), refused, page('c1')]).options)).rejects.toBe(refused);
  });

  it('warns when a poll came back full, as older messages of that second may have been skipped', async () => {
    const full = page('c2', ...Array.from({ length: TAIL_POLL_LIMIT }, (_, index) => `m-${index}`));
    const tail = scripted([page('c1'), full, page('c2')]);
    await followTail(tail.options);
    expect(tail.warnings).toEqual([expect.stringContaining('may have been skipped')]);
  });
});

describe('sleepUnlessAborted', () => {
  it('ends early when interrupted', async () => {
    const interrupt = new AbortController();
    const started = Date.now();
    setTimeout(() => interrupt.abort(), 20);
    await sleepUnlessAborted(10_000, interrupt.signal);
    expect(Date.now() - started).toBeLessThan(5_000);
    await sleepUnlessAborted(10_000, interrupt.signal);
  });
});
