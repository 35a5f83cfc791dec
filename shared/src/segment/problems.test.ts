import { describe, expect, it } from 'vitest';
import { MAX_LISTED_ERRORS, ProblemList } from './problems.js';

describe('ProblemList', () => {
  it('keeps the first MAX_LISTED_ERRORS problems and only counts the rest', () => {
    const problems = new ProblemList();
    for (let index = 0; index < 10_000; index++) problems.add(index, null, 'type', `problem ${index}`);
    expect(problems.listed).toHaveLength(MAX_LISTED_ERRORS);
    expect(problems.listed.at(-1)).toEqual({ index: MAX_LISTED_ERRORS - 1, messageId: null, field: 'type', message: `problem ${MAX_LISTED_ERRORS - 1}` });
    expect(problems.count).toBe(10_000);
    expect(problems.details()).toEqual({ errors: problems.listed, errorCount: 10_000 });
  });

  it('says where the first problem is and how many more there are', () => {
    const problems = new ProblemList();
    problems.add(null, null, 'batch', 'batch must be an array of messages');
    expect(problems.sentence()).toBe('batch must be an array of messages; nothing in this request was accepted');
    problems.add(3, 'm', 'event', 'track needs event');
    expect(problems.sentence()).toBe('batch must be an array of messages (and 1 more problem); nothing in this request was accepted');
    const many = new ProblemList();
    for (let index = 0; index < 250; index++) many.add(index, null, null, 'each message must be a JSON object');
    expect(many.sentence()).toBe('message 0: each message must be a JSON object (and 249 more problems); nothing in this request was accepted');
  });
});
