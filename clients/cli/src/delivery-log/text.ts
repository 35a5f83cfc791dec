/**
 * Cells of the delivery log's tables. Much of what the log shows comes from outside —
 * event names and ids from producers, response bodies from receivers — so every such text
 * is made printable first: a control character (an ANSI escape, a newline that would break
 * a table row) or a bidirectional override is shown as an escape instead of acting on the
 * terminal.
 */

// C0 and C1 controls, DEL, and the bidi embeddings, overrides and isolates.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A printable cell, `-` for nothing. */
export function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  return printable(String(value));
}

/** At most `max` characters of a text, printable and quoted, `…` where it was cut. */
export function quoted(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return `"${printable(cut).replace(/"/g, '\\"')}"`;
}

/** 850ms, 1.2s, 4m05s, 2h07m: a latency or duration at a glance; `-` when not measured. */
export function duration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1_000) return `${ms}ms`;
  // Below 59.95 s, one decimal cannot round up to 60.0s.
  if (ms < 59_950) return `${(ms / 1_000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** A rate from 0 to 1 as a percentage with at most one decimal; `-` when there is none. */
export function percent(rate: number | null): string {
  if (rate === null) return '-';
  return `${Number((rate * 100).toFixed(1))}%`;
}

/** `1 attempt`, `2 attempts`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
