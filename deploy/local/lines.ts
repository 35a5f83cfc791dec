/**
 * Turns a stream of chunks into whole lines with a prefix. Chunks split lines anywhere, so
 * the unfinished tail is held until its newline (or flush) arrives; otherwise two services'
 * half-lines would interleave into one unreadable line.
 */
export class LinePrefixer {
  private pending = '';

  constructor(
    private readonly prefix: string,
    private readonly write: (line: string) => void,
  ) {}

  push(chunk: string): void {
    const text = this.pending + chunk;
    const lines = text.split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.write(`${this.prefix}${line.replace(/\r$/, '')}\n`);
  }

  flush(): void {
    if (this.pending) this.write(`${this.prefix}${this.pending}\n`);
    this.pending = '';
  }
}

/** Fixed-width `[name]` prefixes so the services' log columns line up. */
export function prefixesFor(names: readonly string[]): Map<string, string> {
  const width = Math.max(...names.map((n) => n.length));
  return new Map(names.map((n) => [n, `[${n}]${' '.repeat(width - n.length)} `]));
}
