/**
 * TRIBUTARY_CONFIG: the declarative file applied once at start-up, through the same apply
 * as `POST /admin/v1/config/apply` and the CLI, without pruning — what the admin API added
 * since stays. An invalid file is an error naming the file and each problem's path.
 */
import { ConfigFileError, loadConfigFile, type Logger } from '@tributary/shared';
import { planApply } from './config-plan.js';
import type { ConfigStore } from './config-store.js';
import { toAdminError } from './errors.js';

export async function applyConfigFile(file: string, store: ConfigStore, logger: Logger, env: Record<string, string | undefined> = process.env): Promise<void> {
  const document = await loadConfigFile(file, env);
  try {
    const { changes, written } = await store.commit((state) => planApply(state, document, { prune: false }));
    logger.info({ file, changes, written }, changes.length > 0 ? 'config file applied' : 'config file already in effect');
  } catch (error) {
    const refused = toAdminError(error);
    if (refused?.status === 400) throw new ConfigFileError(file, refused.issues);
    throw error;
  }
}
