/**
 * The `tributary` command: global settings (--url, --token), the command modules, and
 * the exit code — 0 done, 1 input refused, 2 usage or connection problems.
 */
import { Command, CommanderError } from 'commander';
import { AdminClient } from './admin-client.js';
import type { CommandModule } from './command.js';
import { attemptCommands } from './commands/attempts.js';
import { audienceCommands } from './commands/audience.js';
import { configCommands } from './commands/config.js';
import { destinationCommands } from './commands/destinations.js';
import { dlqCommands } from './commands/dlq.js';
import { messageCommands } from './commands/messages.js';
import { quarantineCommands } from './commands/quarantine.js';
import { CliError, EXIT_FAILED, EXIT_OK } from './errors.js';
import { formatIssues } from './format.js';
import { DEFAULT_URL, resolveSettings, type GlobalOptions } from './settings.js';

/** Every command group; a new group is one more module here. */
export const COMMANDS: readonly CommandModule[] = [configCommands, dlqCommands, destinationCommands, quarantineCommands, audienceCommands, messageCommands, attemptCommands];

export interface CliIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** See CommandContext.interruptSignal; without it (tests) nothing interrupts a command. */
  interruptSignal?(): AbortSignal;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = new Command('tributary')
    .description('Tributary admin command line: talks to the ingest service\'s admin API')
    .option('--url <url>', `ingest base URL (env TRIBUTARY_URL, default ${DEFAULT_URL})`)
    .option('--token <token>', 'admin token (env TRIBUTARY_ADMIN_TOKEN, else ADMIN_TOKEN)')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  program.configureHelp({ showGlobalOptions: true });
  const context = {
    env: io.env,
    client: () => new AdminClient(resolveSettings(program.opts<GlobalOptions>(), io.env)),
    out: (line: string) => io.out(`${line}\n`),
    err: (line: string) => io.err(`${line}\n`),
    interruptSignal: () => io.interruptSignal?.() ?? new AbortController().signal,
  };
  for (const register of COMMANDS) register(program, context);
  // Subcommands inherit the overrides, so their usage errors come back here too.
  for (const command of program.commands) command.exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with exit code 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_FAILED;
    }
    if (error instanceof CliError) {
      context.err(`tributary: ${error.message}`);
      for (const line of formatIssues(error.issues)) context.err(line);
      return error.exitCode;
    }
    context.err(`tributary: ${(error as Error).message}`);
    return EXIT_FAILED;
  }
}
