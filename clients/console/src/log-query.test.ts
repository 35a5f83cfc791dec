import { describe, expect, it } from 'vitest';
import {
  currentCursor,
  EMPTY_FILTER,
  filterFromParams,
  filterProblems,
  filterToParams,
  filterToQuery,
  FIRST_PAGE,
  inputTimeToIso,
  newerPage,
  olderPage,
  PAGE_SIZE,
  pageNumber,
} from './log-query';

describe('the search filter', () => {
  it('round-trips through the page URL, dropping empty fields', () => {
    const filter = filterFromParams({ destination: 'crm', status: ' 503 ', other: 'ignored' });
    expect(filter).toEqual({ ...EMPTY_FILTER, destination: 'crm', status: '503' });
    expect(filterToParams(filter)).toEqual({ destination: 'crm', status: '503' });
    expect(filterToParams(EMPTY_FILTER)).toEqual({});
  });

  it('reads datetime-local values as UTC and keeps a zone that is given', () => {
    expect(inputTimeToIso('2026-11-25T10:00')).toBe('2026-11-25T10:00:00.000Z');
    expect(inputTimeToIso('2026-11-25T10:00:30')).toBe('2026-11-25T10:00:30.000Z');
    expect(inputTimeToIso('2026-11-25T10:00:00+01:00')).toBe('2026-11-25T09:00:00.000Z');
    expect(inputTimeToIso('')).toBeUndefined();
    expect(inputTimeToIso('yesterday')).toBeUndefined();
  });

  it('becomes an attempts query with only what is set', () => {
    expect(filterToQuery(EMPTY_FILTER)).toEqual({ limit: PAGE_SIZE });
    expect(
      filterToQuery({ destination: 'crm', status: '5xx', userId: 'u 1', messageId: 'm-1', since: '2026-11-25T10:00', until: '' }, 'c-2'),
    ).toEqual({ limit: PAGE_SIZE, destination: 'crm', status: '5xx', userId: 'u 1', messageId: 'm-1', since: '2026-11-25T10:00:00.000Z', cursor: 'c-2' });
  });

  it('keeps every page of a search on the range it started with: an empty "until" is the time of the search', () => {
    const pinned = '2026-11-25T12:00:00.000Z';
    expect(filterToQuery(EMPTY_FILTER, undefined, pinned)).toEqual({ limit: PAGE_SIZE, until: pinned });
    expect(filterToQuery(EMPTY_FILTER, 'c-2', pinned)).toEqual({ limit: PAGE_SIZE, until: pinned, cursor: 'c-2' });
    // A chosen "until" wins.
    expect(filterToQuery({ ...EMPTY_FILTER, until: '2026-11-25T10:00' }, 'c-2', pinned).until).toBe('2026-11-25T10:00:00.000Z');
  });

  it('names what is wrong before anything is sent', () => {
    expect(filterProblems(EMPTY_FILTER)).toEqual([]);
    expect(filterProblems({ ...EMPTY_FILTER, status: '503' })).toEqual([]);
    expect(filterProblems({ ...EMPTY_FILTER, status: 'error' })).toEqual([]);
    expect(filterProblems({ ...EMPTY_FILTER, status: 'broken' })[0]).toMatch(/"status" must be one of delivered, retry/);
    expect(filterProblems({ ...EMPTY_FILTER, since: 'x' })).toEqual(['"since" is not a date and time']);
    expect(filterProblems({ ...EMPTY_FILTER, since: '2026-11-25T11:00', until: '2026-11-25T10:00' })).toEqual(['"since" is after "until"']);
  });
});

describe('the cursor trail', () => {
  it('goes to older pages by nextCursor and back again', () => {
    expect(currentCursor(FIRST_PAGE)).toBeUndefined();
    const second = olderPage(FIRST_PAGE, 'c-2');
    const third = olderPage(second, 'c-3');
    expect(currentCursor(third)).toBe('c-3');
    expect(pageNumber(third)).toBe(3);
    expect(newerPage(third)).toEqual(second);
    expect(newerPage(newerPage(second))).toEqual(FIRST_PAGE);
  });

  it('stays put at the last page', () => {
    expect(olderPage(FIRST_PAGE, null)).toBe(FIRST_PAGE);
  });
});
