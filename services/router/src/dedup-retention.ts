/**
 * The dedup topic's retention against DEDUP_WINDOW (dedup-store.ts raises it at start).
 */
import kafkajs, { type ConfigEntries } from 'kafkajs';

// kafkajs is CommonJS and Node cannot see this enum as a named export.
const { ConfigSource } = kafkajs;

/**
 * What to write so the topic keeps records at least `windowMs`: its own settings
 * (`TOPIC_CONFIG`, the ones AlterConfigs would otherwise reset) with `retention.ms` raised;
 * undefined when the retention already covers the window or is unlimited (-1).
 */
export function planRetention(
  entries: ReadonlyArray<Pick<ConfigEntries, 'configName' | 'configValue' | 'configSource'>>,
  windowMs: number,
): { fromMs: number; topicConfig: Array<{ name: string; value: string }> } | undefined {
  const retention = entries.find((entry) => entry.configName === 'retention.ms');
  const fromMs = Number(retention?.configValue);
  if (retention === undefined || !Number.isFinite(fromMs) || fromMs < 0 || fromMs >= windowMs) return undefined;
  const topicConfig = entries
    .filter((entry) => entry.configSource === ConfigSource.TOPIC_CONFIG && entry.configName !== 'retention.ms')
    .map((entry) => ({ name: entry.configName, value: entry.configValue }));
  topicConfig.push({ name: 'retention.ms', value: String(windowMs) });
  return { fromMs, topicConfig };
}
