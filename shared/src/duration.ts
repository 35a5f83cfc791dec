/**
 * Human durations used in settings: `100ms`, `10s`, `5m`, `1h`, `2d`, and sums such as
 * `1h30m`. A bare number is refused on purpose: `WEBHOOK_TIMEOUT=5` could mean seconds or
 * milliseconds, and guessing wrong silently is worse than asking for a unit.
 */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(text: string): number {
  const input = text.trim();
  if (input === '') throw new Error('empty duration');
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < input.length) {
    const start = PART.lastIndex;
    const match = PART.exec(input);
    if (!match) {
      throw new Error(
        `invalid duration "${text}" at "${input.slice(start)}": use a number with a unit (ms, s, m, h, d), e.g. 500ms, 10s, 1h30m`,
      );
    }
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  return Math.round(total);
}

/** The shortest exact label for a duration, e.g. 90000 → `90s`, 3600000 → `1h`. */
export function formatDuration(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`cannot format duration ${ms}`);
  if (ms === 0) return '0ms';
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
