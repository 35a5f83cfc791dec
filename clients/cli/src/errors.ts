/**
 * How the command ends: 0 done, 1 the input was refused (validation errors, printed with
 * their paths), 2 the command could not do its work (usage, connection, authentication,
 * a server error).
 */
import type { ValidationIssue } from '@tributary/shared';

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_FAILED = 2;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly issues: ValidationIssue[] = [],
    /** The HTTP status the admin API answered with; undefined when it was not reached. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
