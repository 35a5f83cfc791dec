/**
 * What a command module gets. Each command group (`config`, `dlq`) is one module
 * in `commands/` exporting a `CommandModule`, listed once in program.ts.
 */
import type { Command } from 'commander';
import type { AdminClient } from './admin-client.js';

export interface CommandContext {
  /** The admin API, with settings from the global flags and the environment. */
  client(): AdminClient;
  env: Record<string, string | undefined>;
  out(line: string): void;
  err(line: string): void;
  /**
   * From now on, Ctrl-C ends the command gracefully: the signal aborts, and the command
   * finishes what it is doing and returns. A second Ctrl-C stops the process as usual.
   */
  interruptSignal(): AbortSignal;
}

export type CommandModule = (program: Command, context: CommandContext) => void;
