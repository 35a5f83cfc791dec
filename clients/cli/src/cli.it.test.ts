/**
 * The built `tributary` command (dist/cli.js, as npm installs it) against a real ingest
 * process: a dry run shows the diff and changes nothing, an apply writes it, the same apply
 * again reports no changes, and invalid files exit 1 with their paths.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { topicNames } from '@tributary/schemas';
import { withAdmin } from '@tributary/shared';
import { REPO_ROOT, stackEnv, startService, testKafka, uniqueNamespace, type RunningService } from '@tributary/test/harness';

const CLI = join(REPO_ROOT, 'clients', 'cli', 'dist', 'cli.js');
const TOKEN = 'cli-test-token';
const dir = mkdtempSync(join(tmpdir(), 'tributary-cli-it-'));

let ingest: RunningService;
let namespace: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function tributary(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? '', TRIBUTARY_URL: ingest.url, TRIBUTARY_ADMIN_TOKEN: TOKEN, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function configEndOffset(): Promise<number> {
  const offsets = await withAdmin(testKafka(), (admin) => admin.fetchTopicOffsets(topicNames(namespace).config));
  return offsets.reduce((sum, { high }) => sum + Number(high), 0);
}

const config = (url: string, extra = '') => `
sources:
  - id: web
    name: Web site
    writeKey: wk_cli_web_01
destinations:
  - id: crm-hooks
    type: webhooks
    sources: [web]
    settings:
      sharedSecret: \${CRM_SECRET}
      webhooks:
        - url: ${url}
          headers: { X-Team: growth }
${extra}`;

beforeAll(async () => {
  namespace = uniqueNamespace('cli');
  ingest = await startService('ingest', { env: { ...stackEnv(namespace), ADMIN_TOKEN: TOKEN } });
});

afterAll(async () => {
  await ingest?.stop();
});

describe('tributary config apply', () => {
  it('shows the diff on a dry run and writes nothing', async () => {
    const run = await tributary(['config', 'apply', file('first.yaml', config('https://hooks.example.com/a')), '--dry-run'], { CRM_SECRET: 'one' });
    expect(run).toEqual({ code: 0, stdout: '+ source web\n+ destination crm-hooks\ndry run: 2 to create, 0 to update, 0 to delete; nothing written\n', stderr: '' });
    expect(await configEndOffset()).toBe(0);
  });

  it('applies, and applying the same file again changes nothing', async () => {
    const path = join(dir, 'first.yaml');
    const applied = await tributary(['config', 'apply', path], { CRM_SECRET: 'one' });
    expect(applied).toEqual({ code: 0, stdout: '+ source web\n+ destination crm-hooks\napplied: 2 created, 0 updated, 0 deleted\n', stderr: '' });
    const written = await configEndOffset();
    expect(written).toBe(2);

    const again = await tributary(['config', 'apply', path], { CRM_SECRET: 'one' });
    expect(again).toEqual({ code: 0, stdout: 'no changes\n', stderr: '' });
    expect(await configEndOffset()).toBe(written);
  });

  it('names the changed fields, and deletes only with --prune', async () => {
    const extra = `
  - id: old
    type: webhooks
    sources: []
    settings:
      webhooks: [{ url: https://old.example.com/x }]`;
    await tributary(['config', 'apply', file('with-old.yaml', config('https://hooks.example.com/a', extra))], { CRM_SECRET: 'one' });
    const path = file('second.yaml', config('https://hooks.example.com/b'));
    const changed = await tributary(['config', 'apply', path], { CRM_SECRET: 'two' });
    expect(changed.stdout).toBe('~ destination crm-hooks (settings.sharedSecret, settings.webhooks)\napplied: 0 created, 1 updated, 0 deleted\n');
    const pruned = await tributary(['config', 'apply', path, '--prune'], { CRM_SECRET: 'two' });
    expect(pruned.stdout).toBe('- destination old\napplied: 0 created, 0 updated, 1 deleted\n');
  });

  it('exits 1 and prints each problem with its path', async () => {
    const run = await tributary(['config', 'apply', file('bad.yaml', config('ftp://hooks.example.com/a').replace('X-Team', 'Host'))], { CRM_SECRET: 'x' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `tributary: ${join(dir, 'bad.yaml')} is not valid\n` +
        '  destinations[0].settings.webhooks[0].url: must use http or https, not ftp\n' +
        '  destinations[0].settings.webhooks[0].headers.Host: "Host" is set by Tributary and cannot be a static header\n',
    );
  });

  it('exits 2 with a wrong token', async () => {
    const run = await tributary(['config', 'get'], { TRIBUTARY_ADMIN_TOKEN: 'wrong' });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('tributary: the admin token is not valid (set TRIBUTARY_ADMIN_TOKEN or pass --token)\n');
  });
});

describe('tributary config get', () => {
  it('prints the current config as YAML with secrets redacted, which applies back as no change', async () => {
    const run = await tributary(['config', 'get']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('two');
    const current = parse(run.stdout) as { destinations: Array<{ id: string; settings: Record<string, unknown> }> };
    expect(current.destinations.map((destination) => [destination.id, destination.settings.sharedSecret])).toEqual([['crm-hooks', '[redacted]']]);
    const back = await tributary(['config', 'apply', file('exported.yaml', run.stdout)]);
    expect(back.stdout).toBe('no changes\n');
  });
});
