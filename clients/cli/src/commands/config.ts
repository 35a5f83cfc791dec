/** `tributary config apply FILE [--dry-run] [--prune]` and `tributary config get`. */
import { ConfigFileError, loadConfigFile, type ConfigChange } from '@tributary/shared';
import { CliError, EXIT_FAILED, EXIT_INVALID } from '../errors.js';
import { formatChange, formatConfigYaml, formatSummary, type ConfigSnapshot } from '../format.js';
import type { CommandModule } from '../command.js';

interface ApplyResult {
  changes: ConfigChange[];
  applied: boolean;
  written: number;
}

export const configCommands: CommandModule = (program, context) => {
  const config = program.command('config').description('declarative configuration of sources and destinations');

  config
    .command('apply')
    .description('apply a YAML config file (${VAR} references are read from the environment) and print the changes')
    .argument('<file>', 'the declarative config file')
    .option('--dry-run', 'show the changes without writing them')
    .option('--prune', 'also delete sources and destinations the file does not mention')
    .action(async (file: string, options: { dryRun?: boolean; prune?: boolean }) => {
      let document: unknown;
      try {
        document = await loadConfigFile(file, context.env);
      } catch (error) {
        if (!(error instanceof ConfigFileError)) throw error;
        if (error.unreadable) throw new CliError(`${file} ${error.issues.map((issue) => issue.message).join('; ')}`, EXIT_FAILED);
        throw new CliError(`${file} is not valid`, EXIT_INVALID, error.issues);
      }
      let result: ApplyResult;
      try {
        result = await context.client().request<ApplyResult>('POST', '/config/apply', { document, dryRun: options.dryRun ?? false, prune: options.prune ?? false });
      } catch (error) {
        if (error instanceof CliError && error.exitCode === EXIT_INVALID) throw new CliError(`${file} is not valid`, EXIT_INVALID, error.issues);
        throw error;
      }
      for (const change of result.changes) context.out(formatChange(change));
      context.out(formatSummary(result.changes, options.dryRun ?? false));
    });

  config
    .command('get')
    .description('print the current config as YAML (secrets redacted)')
    .action(async () => {
      const current = await context.client().request<ConfigSnapshot>('GET', '/config');
      context.out(formatConfigYaml(current).trimEnd());
    });
};
