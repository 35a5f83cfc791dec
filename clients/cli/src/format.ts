/** What the CLI prints: changes as a diff, a one-line summary, issues with their paths, config as YAML. */
import { stringify } from 'yaml';
import type { ConfigChange, ValidationIssue } from '@tributary/shared';

const SIGN: Record<ConfigChange['action'], string> = { create: '+', update: '~', delete: '-' };

/** `+ source web`, `~ destination crm-hooks (settings.webhooks, settings.sharedSecret)`, `- destination old`. */
export function formatChange(change: ConfigChange): string {
  const fields = change.action === 'update' && change.fields?.length ? ` (${change.fields.join(', ')})` : '';
  return `${SIGN[change.action]} ${change.kind} ${change.id}${fields}`;
}

function count(changes: ConfigChange[], action: ConfigChange['action']): number {
  return changes.filter((change) => change.action === action).length;
}

export function formatSummary(changes: ConfigChange[], dryRun: boolean): string {
  if (changes.length === 0) return 'no changes';
  const [created, updated, deleted] = [count(changes, 'create'), count(changes, 'update'), count(changes, 'delete')];
  return dryRun
    ? `dry run: ${created} to create, ${updated} to update, ${deleted} to delete; nothing written`
    : `applied: ${created} created, ${updated} updated, ${deleted} deleted`;
}

export function formatIssues(issues: ValidationIssue[]): string[] {
  return issues.map((issue) => `  ${issue.path ? `${issue.path}: ` : ''}${issue.message}`);
}

/**
 * The current config in the declarative file's shape. Secrets that are not set are left
 * out; set ones show the redaction marker, which applying the file back keeps.
 */
export interface ConfigSnapshot {
  sources: unknown[];
  destinations: Array<{ settings?: Record<string, unknown>; [field: string]: unknown }>;
}

/**
 * String values with every `${` written `$${`, the config file's escape for a literal `${`: the
 * file reader expands `${NAME}` in every string value, so a name such as "Price ${USD}" printed
 * raw would be read back as a reference (refused, or replaced by the variable) and the file
 * would not apply back as "no changes". Keys are never expanded, so they stay as they are.
 */
function escapeReferences(value: unknown): unknown {
  // A function, not the string '$${': in a replacement string "$$" stands for one "$".
  if (typeof value === 'string') return value.replaceAll('${', () => '$${');
  if (Array.isArray(value)) return value.map(escapeReferences);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, escapeReferences(inner)]));
  return value;
}

export function formatConfigYaml(config: ConfigSnapshot): string {
  const destinations = config.destinations.map((destination) => ({
    ...destination,
    settings: Object.fromEntries(Object.entries(destination.settings ?? {}).filter(([, value]) => value !== null)),
  }));
  return stringify(escapeReferences({ sources: config.sources, destinations }));
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function formatTable(columns: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = columnWidths(columns, rows);
  return [formatRow(widths, columns), ...rows.map((row) => formatRow(widths, row))];
}

/** Each column's width: its widest cell or title, and at least `minimums[column]`. */
export function columnWidths(columns: readonly string[], rows: ReadonlyArray<readonly string[]>, minimums: readonly number[] = []): number[] {
  return columns.map((title, column) => Math.max(title.length, minimums[column] ?? 0, ...rows.map((row) => row[column]!.length)));
}

/**
 * One table line. A cell wider than its column pushes the rest of its line right rather
 * than being cut: output printed page by page keeps the widths of its first page.
 */
export function formatRow(widths: readonly number[], cells: readonly string[]): string {
  return cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
}
