/**
 * The problems found in one request, as a refusal lists them: every one counted, only the
 * first MAX_LISTED_ERRORS kept. A 500 KB batch of tens of thousands of broken items would
 * otherwise build (and hold) an object per problem only to throw all but 100 of them away.
 * Each listed messageId is cut as answers cut what they repeat (echo.ts), so the answer stays
 * small whatever the ids sent.
 */
import { echoed } from './echo.js';

/** Problems listed in one answer; a badly broken batch of 500 should not produce a huge reply. */
export const MAX_LISTED_ERRORS = 100;

export interface FieldError {
  /** Position in the batch (0 for a single call); null for a problem of the request itself. */
  index: number | null;
  /** The client's messageId, its first 100 characters when longer (echo.ts). */
  messageId: string | null;
  /** The offending field; null when the whole message is at fault. */
  field: string | null;
  message: string;
}

export class ProblemList {
  /** The first MAX_LISTED_ERRORS problems, in the order found. */
  readonly listed: FieldError[] = [];
  /** All problems found, listed or not. */
  count = 0;

  add(index: number | null, messageId: string | null, field: string | null, message: string): void {
    this.count++;
    if (this.listed.length < MAX_LISTED_ERRORS) this.listed.push({ index, messageId: messageId === null ? null : echoed(messageId), field, message });
  }

  /**
   * The answer's sentence: the first problem, where it is, and how many more there are.
   * Only called once a problem was added.
   */
  sentence(): string {
    const first = this.listed[0]!;
    const where = first.index === null ? '' : `message ${first.index}: `;
    const others = this.count - 1;
    const more = others > 0 ? ` (and ${others} more problem${others > 1 ? 's' : ''})` : '';
    return `${where}${first.message}${more}; nothing in this request was accepted`;
  }

  /** The answer's details: what is listed, and the count of all. */
  details(): { errors: FieldError[]; errorCount: number } {
    return { errors: this.listed, errorCount: this.count };
  }
}
