/**
 * The admin API's one error shape, `{"error", "code", "issues": [{path, message}]}` (plus
 * details such as the destinations that still use a source). Shared because two processes
 * answer admin routes — ingest, and the delivery-log indexer behind it — and a client must
 * not be able to tell which one refused its request.
 */
import type { ValidationIssue } from '../config-model.js';

export interface AdminErrorBody {
  error: string;
  code: string;
  issues: ValidationIssue[];
  [detail: string]: unknown;
}

export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: ValidationIssue[] = [],
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AdminError';
  }

  body(): AdminErrorBody {
    return { error: this.message, code: this.code, issues: this.issues, ...this.details };
  }
}
