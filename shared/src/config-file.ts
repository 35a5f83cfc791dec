/**
 * The declarative config file: YAML with `${VAR}` references, turned into the document
 * the admin API's apply takes. The ingest start-up apply (TRIBUTARY_CONFIG) and the CLI
 * (`tributary config apply FILE`) both read files through here, so a file means the same
 * thing to both.
 *
 * References are expanded after parsing and only inside string values, so a variable's
 * value is always taken literally: it cannot add YAML structure, whatever it contains.
 * `$${` writes a literal `${`.
 */
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, parseDocument, visit, type Document } from 'yaml';
import { ConfigValidationError, formatPath, type ValidationIssue } from './config-model.js';

const REFERENCE = /\$\$\{|\$\{([^}]*)\}?/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type Environment = Record<string, string | undefined>;

/**
 * Problems are named by the value's path only, never by the text matched: a malformed
 * reference sits inside a value that is often a secret ("Xk9${q7Zp!2w" would have been quoted
 * from its "${" to its end), and these messages reach the start-up log and the CLI's output.
 */
function expandString(text: string, env: Environment, path: string, issues: ValidationIssue[]): string {
  return text.replace(REFERENCE, (match, name: string | undefined) => {
    if (match === '$${') return '${';
    if (!match.endsWith('}')) {
      issues.push({ path, message: 'holds a "${" that is not closed; write ${NAME} (or $${ for a literal ${)' });
      return match;
    }
    if (name === undefined || !VARIABLE_NAME.test(name)) {
      issues.push({ path, message: 'holds a "${…}" that is not a variable reference; names are letters, digits and "_" (write $${ for a literal ${)' });
      return match;
    }
    const value = env[name];
    if (value === undefined || value === '') {
      issues.push({ path, message: `refers to environment variable ${name}, which is not set` });
      return match;
    }
    return value;
  });
}

function expand(value: unknown, env: Environment, path: PropertyKey[], issues: ValidationIssue[]): unknown {
  if (typeof value === 'string') return expandString(value, env, formatPath('', path), issues);
  if (Array.isArray(value)) return value.map((item, index) => expand(item, env, [...path, index], issues));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, expand(inner, env, [...path, key], issues)]));
  }
  return value;
}

/**
 * Parses YAML text into a config document with `${VAR}` references expanded from `env`.
 * Throws ConfigValidationError naming each problem: YAML syntax errors with their line and
 * column, unset variables with the path of the value that refers to them.
 */
export function parseConfigYaml(text: string, env: Environment = process.env): unknown {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigValidationError(
      document.errors.map((error) => {
        const at = error.linePos?.[0];
        return { path: at ? `line ${at.line}, column ${at.col}` : '', message: error.message.split('\n')[0] ?? error.message };
      }),
    );
  }
  // An empty file (or one of comments only) is refused rather than read as an empty document:
  // applied with prune, that would delete every source and destination. An empty config is
  // still possible on purpose, written out as `sources: []` and `destinations: []`.
  if (isEmpty(document)) {
    throw new ConfigValidationError([{ path: '', message: 'is empty; to apply an empty configuration on purpose, write "sources: []" and "destinations: []"' }]);
  }
  keepHeaderValuesAsWritten(document);
  const issues: ValidationIssue[] = [];
  const expanded = expand(document.toJS({ maxAliasCount: 100 }), env, [], issues);
  if (issues.length > 0) throw new ConfigValidationError(issues);
  return expanded;
}

/** Nothing written: no content at all, or only a `---` marker (read as a plain scalar with no text). */
function isEmpty(document: Document): boolean {
  const contents = document.contents;
  return contents === null || (isScalar(contents) && contents.type === 'PLAIN' && contents.value === null && contents.source === '');
}

/**
 * YAML reads an unquoted `X-Version: 1.10` as the number 1.1, `007` as 7 and `0x1F` as 31; a
 * header is text, so a static header's unquoted value is taken as written, not as the value
 * it reads as.
 */
function keepHeaderValuesAsWritten(document: Document): void {
  visit(document, {
    Pair(_key, pair) {
      if (!isScalar(pair.key) || pair.key.value !== 'headers' || !isMap(pair.value)) return;
      for (const header of pair.value.items) {
        const value = header.value;
        if (isScalar(value) && value.type === 'PLAIN' && typeof value.value !== 'string' && value.source !== undefined) value.value = value.source;
      }
    },
  });
}

export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ValidationIssue[],
    /** True when the file could not be read at all, as opposed to read and refused. */
    readonly unreadable = false,
  ) {
    super(`${file} is not a valid Tributary config:\n${issues.map((issue) => `  - ${issue.path ? `${issue.path}: ` : ''}${issue.message}`).join('\n')}`);
    this.name = 'ConfigFileError';
  }
}

/** Reads and parses a config file; every problem (including a missing file) names the file. */
export async function loadConfigFile(file: string, env: Environment = process.env): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigFileError(file, [{ path: '', message: `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` }], true);
  }
  try {
    return parseConfigYaml(text, env);
  } catch (error) {
    if (error instanceof ConfigValidationError) throw new ConfigFileError(file, error.issues);
    throw error;
  }
}
