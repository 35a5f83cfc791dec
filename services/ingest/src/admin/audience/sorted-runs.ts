/**
 * External sort for audience syncs: entries (a user id and a payload) are buffered up to a
 * byte bound, sorted and written to a run file; reading merges the runs in user-id order.
 * Memory stays at one buffer plus one line per run however many members there are.
 *
 * An entry is one line: the user id as JSON text (so it holds no tab or newline), a tab,
 * then the payload. Entries with the same user id keep the order they were added in
 * (`seq`), so "the last one wins" can be decided while merging.
 */
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface SortedEntry {
  userId: string;
  payload: string;
}

const DEFAULT_RUN_BYTES = 4 * 1024 * 1024;

/** Code-unit order of user ids: the same comparison on both sides of a diff. */
export function compareUserIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Buffered {
  userId: string;
  seq: number;
  payload: string;
}

export class SortedRuns {
  private readonly dir: string;
  private buffer: Buffered[] = [];
  private bufferBytes = 0;
  private readonly runs: string[] = [];
  private seq = 0;

  constructor(private readonly runBytes = DEFAULT_RUN_BYTES) {
    this.dir = mkdtempSync(join(tmpdir(), 'tributary-audience-'));
  }

  add(userId: string, payload: string): void {
    this.buffer.push({ userId, seq: this.seq++, payload });
    this.bufferBytes += userId.length * 2 + payload.length * 2 + 64;
    if (this.bufferBytes >= this.runBytes) this.spill();
  }

  /** Entries in user-id order, the same user's in the order they were added. */
  async *sorted(): AsyncGenerator<SortedEntry> {
    if (this.runs.length === 0) {
      // Everything fits in memory: no file at all.
      const entries = this.sortBuffer();
      this.buffer = [];
      for (const { userId, payload } of entries) yield { userId, payload };
      return;
    }
    this.spill();
    const readers = this.runs.map((path) => createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity })[Symbol.asyncIterator]());
    const heads: Array<{ userId: string; seq: number; payload: string } | undefined> = await Promise.all(readers.map((reader) => next(reader)));
    for (;;) {
      let best = -1;
      for (let index = 0; index < heads.length; index++) {
        const head = heads[index];
        if (!head) continue;
        const current = best < 0 ? undefined : heads[best]!;
        if (!current || compareUserIds(head.userId, current.userId) < 0 || (head.userId === current.userId && head.seq < current.seq)) best = index;
      }
      if (best < 0) return;
      const { userId, payload } = heads[best]!;
      heads[best] = await next(readers[best]!);
      yield { userId, payload };
    }
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private sortBuffer(): Buffered[] {
    return this.buffer.sort((a, b) => compareUserIds(a.userId, b.userId) || a.seq - b.seq);
  }

  private spill(): void {
    if (this.buffer.length === 0) return;
    const path = join(this.dir, `run-${this.runs.length}`);
    const text = this.sortBuffer()
      .map(({ userId, seq, payload }) => `${JSON.stringify(userId)}\t${seq}\t${payload}`)
      .join('\n');
    writeFileSync(path, `${text}\n`);
    this.runs.push(path);
    this.buffer = [];
    this.bufferBytes = 0;
  }
}

async function next(reader: AsyncIterator<string>): Promise<Buffered | undefined> {
  const { value, done } = await reader.next();
  if (done) return undefined;
  const first = value.indexOf('\t');
  const second = value.indexOf('\t', first + 1);
  return { userId: JSON.parse(value.slice(0, first)) as string, seq: Number(value.slice(first + 1, second)), payload: value.slice(second + 1) };
}
