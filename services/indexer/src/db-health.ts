/**
 * Readiness of the database while nothing is being written: the writer learns of an outage
 * only when it writes, so an idle indexer would look ready with its database gone. A cheap
 * query every few seconds, with a deadline, keeps /readyz honest.
 */
import type { Logger, Readiness } from '@tributary/shared';
import type { SqlExecutor } from './sql/client.js';

export class DatabaseHealth {
  private timer: NodeJS.Timeout | undefined;
  private healthy: boolean | undefined;

  constructor(private readonly options: { db: SqlExecutor; readiness: Readiness; logger: Logger; intervalMs?: number; timeoutMs?: number }) {}

  start(): void {
    const { intervalMs = 5_000 } = this.options;
    const tick = async () => {
      this.report(await this.check());
      this.timer = setTimeout(() => void tick(), intervalMs);
    };
    this.timer = setTimeout(() => void tick(), intervalMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  async check(): Promise<boolean> {
    const { db, timeoutMs = 3_000 } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([db.query('SELECT 1').then(() => true, () => false), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private report(healthy: boolean): void {
    this.options.readiness.set('database', healthy);
    if (healthy !== this.healthy && this.healthy !== undefined) {
      if (healthy) this.options.logger.info('the delivery log database answers again');
      else this.options.logger.warn('the delivery log database does not answer');
    }
    this.healthy = healthy;
  }
}
