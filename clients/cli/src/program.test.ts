import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './program.js';

async function run(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env, out: (text) => (out += text), err: (text) => (err += text) });
  return { code, out, err };
}

describe('runCli without a server', () => {
  it('exits 0 for help, 2 for usage errors', async () => {
    expect((await run(['--help'])).code).toBe(0);
    const unknown = await run(['nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown command 'nope'");
    expect((await run(['config', 'apply'])).err).toContain("missing required argument 'file'");
    expect((await run(['config', 'apply'])).code).toBe(2);
  });

  it('exits 1 with the paths of a file that cannot be parsed or has unset variables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tributary-cli-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'destinations:\n  - id: d\n    settings:\n      sharedSecret: ${NOT_SET}\n');
    const result = await run(['config', 'apply', file], { ADMIN_TOKEN: 't' });
    expect(result.code).toBe(1);
    expect(result.err).toBe(`tributary: ${file} is not valid\n  destinations[0].settings.sharedSecret: refers to environment variable NOT_SET, which is not set\n`);
  });

  it('exits 2 when the file is missing or the server cannot be reached', async () => {
    const missing = await run(['config', 'apply', '/does/not/exist.yaml'], { ADMIN_TOKEN: 't' });
    expect([missing.code, missing.err]).toEqual([2, 'tributary: /does/not/exist.yaml cannot be read: ENOENT\n']);
    const unreachable = await run(['--url', 'http://127.0.0.1:9', 'config', 'get'], { ADMIN_TOKEN: 't' });
    expect(unreachable.code).toBe(2);
    expect(unreachable.err).toMatch(/^tributary: cannot reach the ingest service at http:\/\/127\.0\.0\.1:9: /);
    expect((await run(['config', 'get'])).err).toBe('tributary: no admin token: set TRIBUTARY_ADMIN_TOKEN (or ADMIN_TOKEN), or pass --token\n');
  });
});
