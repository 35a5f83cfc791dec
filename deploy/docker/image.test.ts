/**
 * Checks of deploy/docker/Dockerfile that need no Docker engine: what it copies exists in the
 * build context (the repository root, minus .dockerignore), the runtime stage runs as a
 * numeric non-root user under tini, and the entry points it and the chart run are what
 * `npm run build` produces.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../local/paths.js';
import { INGEST_MAX_OLD_SPACE_MB, SERVICE_NODE_ARGS } from '../local/service-env.js';
import { SERVICES } from '../observability/metrics.js';
import { execForm, isIgnored, parseCopy, parseDockerfile, parseDockerignore, stagesOf, type Instruction } from './dockerfile.js';

const dockerfile = parseDockerfile(readFileSync(join(repoRoot, 'deploy', 'docker', 'Dockerfile'), 'utf8'));
const stages = stagesOf(dockerfile);
const ignoreRules = parseDockerignore(readFileSync(join(repoRoot, '.dockerignore'), 'utf8'));
const runtime = stages.at(-1);
/** What PGlite loads from beside its own module when the indexer opens an embedded database. */
const PGLITE_RUNTIME_FILES = ['pglite.wasm', 'pglite.data', 'initdb.wasm'];

/** Workspace directories from the root package.json (`dir` or `dir/*` entries). */
function workspaceDirs(): string[] {
  const { workspaces } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
  return workspaces.flatMap((entry) => {
    if (!entry.endsWith('/*')) return [entry];
    const parent = entry.slice(0, -2);
    return readdirSync(join(repoRoot, parent))
      .map((name) => `${parent}/${name}`)
      .filter((dir) => existsSync(join(repoRoot, dir, 'package.json')));
  });
}

function last(keyword: string, instructions: Instruction[]): Instruction {
  const found = instructions.filter((i) => i.keyword === keyword).at(-1);
  if (!found) throw new Error(`the runtime stage has no ${keyword}`);
  return found;
}

describe('deploy/docker/Dockerfile', () => {
  it('copies from the context only what exists there and .dockerignore keeps', () => {
    const copies = stages.flatMap((stage) => stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD').map(parseCopy));
    const fromContext = copies.filter((copy) => copy.from === undefined);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const copy of fromContext) {
      for (const source of copy.sources) {
        expect(existsSync(join(repoRoot, source)), `line ${copy.line}: COPY source ${source}`).toBe(true);
        if (source !== '.') expect(isIgnored(source, ignoreRules), `line ${copy.line}: ${source} is in .dockerignore`).toBe(false);
      }
    }
  });

  it('copies between stages only from stages defined earlier', () => {
    stages.forEach((stage, index) => {
      const earlier = new Set(stages.slice(0, index).map((s) => s.name));
      for (const copy of stage.instructions.filter((i) => i.keyword === 'COPY').map(parseCopy)) {
        if (copy.from !== undefined) expect(earlier.has(copy.from), `line ${copy.line}: --from=${copy.from}`).toBe(true);
      }
    });
  });

  it('keeps what npm ci and the build read in the context, and leaves local builds out', () => {
    const needed = [
      'package.json',
      'package-lock.json',
      'tsconfig.base.json',
      'turbo.json',
      ...workspaceDirs().map((dir) => `${dir}/package.json`),
      ...readdirSync(join(repoRoot, 'schemas', 'avro')).map((file) => `schemas/avro/${file}`),
      'shared/src/index.ts',
      ...SERVICES.map((name) => `services/${name}/src/main.ts`),
      'clients/console/src/index.html',
      'clients/console/vite.config.ts',
    ];
    for (const path of needed) expect(isIgnored(path, ignoreRules), `${path} must reach the build context`).toBe(false);
    for (const path of ['node_modules/kafkajs/package.json', 'shared/dist/index.js', 'services/ingest/dist/main.js', '.git/HEAD']) {
      expect(isIgnored(path, ignoreRules), `${path} must stay out of the build context`).toBe(true);
    }
  });

  it('builds, installs and ships every service and the workspaces they import', () => {
    const text = dockerfile.map((i) => i.args).join('\n');
    const shipped = /for dir in ([^;]+); do/.exec(text)?.[1]?.trim().split(/\s+/);
    // ingest serves the web console's build (clients/console/dist), so that workspace ships too.
    expect(shipped).toEqual(['shared', 'schemas', 'clients/console', ...SERVICES.map((name) => `services/${name}`)]);
    expect(text).toContain('--workspace=clients/console');
    for (const name of SERVICES) {
      expect(text).toContain(`--filter=@tributary/${name}`);
      expect(text).toContain(`--workspace=services/${name}`);
    }
    expect(text).toContain('--workspace=shared --workspace=schemas');
  });

  it("ships PGlite's wasm and data files, which its npm package holds, and checks them at build time", () => {
    // Resolved from the indexer's workspace, through node_modules, as the indexer finds it at run time.
    const pglite = pathToFileURL(dirname(createRequire(join(repoRoot, 'services', 'indexer', 'package.json')).resolve('@electric-sql/pglite')) + '/');
    const text = dockerfile.map((i) => i.args).join('\n');
    for (const file of PGLITE_RUNTIME_FILES) {
      expect(existsSync(new URL(file, pglite)), `${file} is not in ${pglite.pathname}`).toBe(true);
      expect(text, `the build does not check ${file}`).toContain(`'${file}'`);
    }
    expect(text).toContain("import.meta.resolve('@electric-sql/pglite')");
  });

  it('runs as a numeric non-root user under tini, ingest by default', () => {
    expect(runtime).toBeDefined();
    const instructions = runtime?.instructions ?? [];
    const [user] = last('USER', instructions).args.split(':');
    expect(user).toMatch(/^\d+$/);
    expect(Number(user)).toBeGreaterThan(0);
    expect(execForm(last('ENTRYPOINT', instructions))).toEqual(['/usr/bin/tini', '--']);
    expect(execForm(last('CMD', instructions))).toEqual(['node', ...SERVICE_NODE_ARGS, `--max-old-space-size=${INGEST_MAX_OLD_SPACE_MB}`, 'services/ingest/dist/main.js']);
    expect(runtime?.image).toBe('${NODE_IMAGE}');
    expect(dockerfile.find((i) => i.keyword === 'ARG')?.args).toMatch(/^NODE_IMAGE=node:20-bookworm-slim$/);
  });

  it('has every service entry point and the console ingest serves after `npm run build`', () => {
    for (const name of SERVICES) {
      const entry = join(repoRoot, 'services', name, 'dist', 'main.js');
      expect(existsSync(entry) && statSync(entry).isFile(), `${entry} is missing: run \`npm run build\` first`).toBe(true);
    }
    const consoleIndex = join(repoRoot, 'clients', 'console', 'dist', 'index.html');
    expect(existsSync(consoleIndex), `${consoleIndex} is missing: run \`npm run build\` first`).toBe(true);
  });
});
