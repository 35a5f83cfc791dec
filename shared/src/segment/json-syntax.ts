/**
 * Where JSON text stops being JSON, found without quoting any of it. V8's JSON.parse names
 * the position for most mistakes, but for an unexpected character it quotes an excerpt of the
 * text instead (`Unexpected token 'x', ..."ey":"wk_…"... is not valid JSON`), and a body's
 * excerpt may hold its write key. This scanner walks the JSON grammar (RFC 8259) and gives the
 * offset of the first character that does not fit it; it runs only on text JSON.parse refused.
 */

/** Thrown inside the scan at the offending offset; never leaves this module. */
class StopAt {
  constructor(readonly offset: number) {}
}

const LITERALS = ['true', 'false', 'null'] as const;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isHexDigit(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

class Scanner {
  at = 0;

  constructor(private readonly text: string) {}

  private code(): number {
    return this.at < this.text.length ? this.text.charCodeAt(this.at) : -1;
  }

  skipSpace(): void {
    while (isSpace(this.code())) this.at++;
  }

  /** Consumes `char` or stops at what is there instead. */
  expect(char: string): void {
    if (this.text[this.at] !== char) throw new StopAt(this.at);
    this.at++;
  }

  string(): void {
    this.expect('"');
    for (;;) {
      const code = this.code();
      if (code === -1 || code < 0x20) throw new StopAt(this.at);
      this.at++;
      if (code === 0x22) return;
      if (code !== 0x5c) continue;
      const escaped = this.text[this.at];
      if (escaped === 'u') {
        for (let digit = 1; digit <= 4; digit++) if (!isHexDigit(this.text.charCodeAt(this.at + digit))) throw new StopAt(this.at + digit);
        this.at += 5;
      } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) this.at++;
      else throw new StopAt(this.at);
    }
  }

  private digits(): void {
    if (!isDigit(this.code())) throw new StopAt(this.at);
    while (isDigit(this.code())) this.at++;
  }

  private number(): void {
    if (this.code() === 0x2d) this.at++;
    if (this.code() === 0x30) this.at++;
    else this.digits();
    if (this.code() === 0x2e) {
      this.at++;
      this.digits();
    }
    if (this.code() === 0x65 || this.code() === 0x45) {
      this.at++;
      if (this.code() === 0x2b || this.code() === 0x2d) this.at++;
      this.digits();
    }
  }

  private literal(): void {
    const word = LITERALS.find((candidate) => candidate[0] === this.text[this.at]);
    if (word === undefined) throw new StopAt(this.at);
    for (const char of word) this.expect(char);
  }

  /** A scalar, or the opening of an array or object (returned for the caller's stack). */
  valueStart(): '[' | '{' | undefined {
    this.skipSpace();
    const char = this.text[this.at];
    if (char === '[' || char === '{') {
      this.at++;
      return char;
    }
    if (char === '"') this.string();
    else if (char === '-' || isDigit(this.code())) this.number();
    else this.literal();
    return undefined;
  }

  /** An object member's name and colon. */
  memberName(): void {
    this.skipSpace();
    this.string();
    this.skipSpace();
    this.expect(':');
  }
}

/**
 * The offset of the first character of `text` that is not valid JSON there (`text.length`
 * when the text ends too early); undefined when the whole text is valid JSON. Iterative, so
 * nesting depth costs no stack.
 */
export function syntaxErrorOffset(text: string): number | undefined {
  const scanner = new Scanner(text);
  const open: Array<'[' | '{'> = [];
  try {
    let opened = scanner.valueStart();
    for (;;) {
      if (opened !== undefined) {
        // Just inside a bracket: it may close at once, or holds a first element or member.
        scanner.skipSpace();
        if (text[scanner.at] === (opened === '[' ? ']' : '}')) scanner.at++;
        else {
          open.push(opened);
          if (opened === '{') scanner.memberName();
          opened = scanner.valueStart();
          continue;
        }
      }
      // After a complete value: a comma and the next element, a closing bracket, or the end.
      scanner.skipSpace();
      const inside = open.at(-1);
      if (inside === undefined) return scanner.at < text.length ? scanner.at : undefined;
      if (text[scanner.at] === ',') {
        scanner.at++;
        if (inside === '{') scanner.memberName();
        opened = scanner.valueStart();
        continue;
      }
      scanner.expect(inside === '[' ? ']' : '}');
      open.pop();
      opened = undefined;
    }
  } catch (stop) {
    if (stop instanceof StopAt) return Math.min(stop.offset, text.length);
    throw stop;
  }
}

/** The 1-based line and column of `offset` in `text`, counting lines by `\n`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
