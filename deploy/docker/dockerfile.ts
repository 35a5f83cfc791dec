/**
 * Reading a Dockerfile and a .dockerignore far enough to check, without a Docker engine,
 * that the image build can find what it copies: instructions with their continuation lines,
 * build stages, COPY sources, and Docker's ignore-pattern rules (`**`, `*`, `?`, `!`, a
 * pattern matching a directory excludes everything under it).
 */

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line.startsWith('#') || line === '') return;
    const continued = line.endsWith('\\');
    const content = continued ? line.slice(0, -1).trim() : line;
    pending ??= { parts: [], line: index + 1 };
    if (content !== '') pending.parts.push(content);
    if (continued) return;
    const joined = pending.parts.join(' ');
    const space = joined.search(/\s/);
    instructions.push({
      keyword: (space === -1 ? joined : joined.slice(0, space)).toUpperCase(),
      args: space === -1 ? '' : joined.slice(space + 1).trim(),
      line: pending.line,
    });
    pending = undefined;
  });
  return instructions;
}

export interface CopyInstruction {
  from?: string;
  sources: string[];
  destination: string;
  line: number;
}

/** COPY/ADD in shell form (`COPY --from=x a b dest`) or JSON form (`COPY ["a", "dest"]`). */
export function parseCopy(instruction: Instruction): CopyInstruction {
  const words = instruction.args.startsWith('[') ? (JSON.parse(instruction.args) as string[]) : instruction.args.split(/\s+/);
  const flags = words.filter((word) => word.startsWith('--'));
  const paths = words.filter((word) => !word.startsWith('--'));
  const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
  const destination = paths.pop();
  if (destination === undefined || paths.length === 0) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
  return { ...(from === undefined ? {} : { from }), sources: paths, destination, line: instruction.line };
}

export interface Stage {
  name?: string;
  image: string;
  instructions: Instruction[];
}

export function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ image, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** The arguments of an exec-form (JSON array) ENTRYPOINT or CMD; shell form is refused. */
export function execForm(instruction: Instruction): string[] {
  if (!instruction.args.startsWith('[')) throw new Error(`line ${instruction.line}: ${instruction.keyword} must use the exec (JSON) form`);
  return JSON.parse(instruction.args) as string[];
}

export interface IgnoreRule {
  pattern: RegExp;
  exclude: boolean;
}

function cleanPath(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '').replace(/\/+$/, '').replace(/\/{2,}/g, '/');
}

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more directories; a trailing `**` matches anything below.
      if (glob[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const exclude = !line.startsWith('!');
      return { pattern: globToRegExp(cleanPath(exclude ? line : line.slice(1).trim())), exclude };
    });
}

/** Whether Docker leaves `path` (relative to the context root) out of the build context. */
export function isIgnored(path: string, rules: IgnoreRule[]): boolean {
  const parts = cleanPath(path).split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.pattern.test(candidate))) ignored = rule.exclude;
  }
  return ignored;
}
