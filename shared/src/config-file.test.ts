import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thrown } from '@tributary/test/harness/thrown';
import { ConfigFileError, loadConfigFile, parseConfigYaml } from './config-file.js';
import { ConfigValidationError, parseConfigDocument, type ValidationIssue } from './config-model.js';

const designExample = `
sources:
  - id: web
    name: Web site
    writeKey: wk_web_example
destinations:
  - id: crm-hooks
    type: webhooks
    sources: [web]
    enabled: true
    settings:
      sharedSecret: \${CRM_SECRET}          # optional; enables X-Signature
      webhooks:                        # 1 to 5 entries
        - url: https://hooks.example.com/segment
          headers: { X-Team: growth, Authorization: "Bearer \${CRM_TOKEN}" }
`;

const issuesOf = (run: () => unknown): ValidationIssue[] => thrown(run, ConfigValidationError).issues;

describe('parseConfigYaml', () => {
  it('takes a static header\'s unquoted value as written, not as the number YAML reads it as', () => {
    const text = [
      'destinations:',
      '  - id: d',
      '    settings:',
      '      webhooks:',
      '        - url: https://hooks.example.com/a',
      '          headers: { X-Version: 1.10, X-Id: 007, X-Big: 12345678901234567890, X-Hex: 0x1F, X-On: true, X-Quoted: "1.10" }',
      '    retries: 007',
    ].join('\n');
    const parsed = parseConfigYaml(text, {}) as { destinations: Array<{ retries: unknown; settings: { webhooks: Array<{ headers: unknown }> } }> };
    expect(parsed.destinations[0]!.settings.webhooks[0]!.headers).toEqual({ 'X-Version': '1.10', 'X-Id': '007', 'X-Big': '12345678901234567890', 'X-Hex': '0x1F', 'X-On': 'true', 'X-Quoted': '1.10' });
    // Elsewhere YAML's reading stands (the config model says what it expects).
    expect(parsed.destinations[0]!.retries).toBe(7);
  });

  it('reads the design example and expands references inside strings', () => {
    const document = parseConfigYaml(designExample, { CRM_SECRET: 's3cret', CRM_TOKEN: 'tok' });
    expect(document).toEqual({
      sources: [{ id: 'web', name: 'Web site', writeKey: 'wk_web_example' }],
      destinations: [
        {
          id: 'crm-hooks',
          type: 'webhooks',
          sources: ['web'],
          enabled: true,
          settings: {
            sharedSecret: 's3cret',
            webhooks: [{ url: 'https://hooks.example.com/segment', headers: { 'X-Team': 'growth', Authorization: 'Bearer tok' } }],
          },
        },
      ],
    });
    expect(parseConfigDocument(document).destinations[0]?.settings.sharedSecret).toBe('s3cret');
  });

  it('names the path of every reference to an unset variable', () => {
    expect(issuesOf(() => parseConfigYaml(designExample, { CRM_TOKEN: '' }))).toEqual([
      { path: 'destinations[0].settings.sharedSecret', message: 'refers to environment variable CRM_SECRET, which is not set' },
      { path: 'destinations[0].settings.webhooks[0].headers.Authorization', message: 'refers to environment variable CRM_TOKEN, which is not set' },
    ]);
  });

  it('takes variable values literally', () => {
    expect(parseConfigYaml('a: "${V}"', { V: '{x: [1]}\n- b: ${W}' })).toEqual({ a: '{x: [1]}\n- b: ${W}' });
  });

  it('expands several references in one value and leaves keys alone', () => {
    expect(parseConfigYaml('${K}: "${A}-${B}"', { A: '1', B: '2', K: 'key' })).toEqual({ '${K}': '1-2' });
  });

  it('writes a literal ${ for $${', () => {
    expect(parseConfigYaml('a: "$${HOME} costs $5"', {})).toEqual({ a: '${HOME} costs $5' });
  });

  it('refuses malformed references, naming the path and never quoting the value (often a secret)', () => {
    expect(issuesOf(() => parseConfigYaml('a: "${UNCLOSED"', {}))).toEqual([{ path: 'a', message: 'holds a "${" that is not closed; write ${NAME} (or $${ for a literal ${)' }]);
    const notAName = 'holds a "${…}" that is not a variable reference; names are letters, digits and "_" (write $${ for a literal ${)';
    expect(issuesOf(() => parseConfigYaml('a: "${1BAD}"', {}))).toEqual([{ path: 'a', message: notAName }]);
    expect(issuesOf(() => parseConfigYaml('a: "${}"', {}))).toEqual([{ path: 'a', message: notAName }]);
    const secret = 'destinations:\n  - settings:\n      sharedSecret: "Xk9${q7Zp!2w"\n      headers: { Authorization: "Bearer Qz${c-d}Wy" }\n';
    const issues = issuesOf(() => parseConfigYaml(secret, {}));
    expect(issues.map((issue) => issue.path)).toEqual(['destinations[0].settings.sharedSecret', 'destinations[0].settings.headers.Authorization']);
    for (const fragment of ['Xk9', 'q7Zp', '2w', 'c-d', 'Qz', 'Wy']) expect(JSON.stringify(issues)).not.toContain(fragment);
  });

  it('leaves numbers, booleans and null as YAML typed them', () => {
    expect(parseConfigYaml('a: 3\nb: true\nc: null\nd: "3"', {})).toEqual({ a: 3, b: true, c: null, d: '3' });
  });

  it('refuses an empty file, which applied with prune would delete everything, and reads explicit empty lists', () => {
    const empty = [{ path: '', message: 'is empty; to apply an empty configuration on purpose, write "sources: []" and "destinations: []"' }];
    expect(issuesOf(() => parseConfigYaml('', {}))).toEqual(empty);
    expect(issuesOf(() => parseConfigYaml('# nothing yet\n\n# sources: []\n', {}))).toEqual(empty);
    expect(issuesOf(() => parseConfigYaml('---\n', {}))).toEqual(empty);
    expect(parseConfigYaml('sources: []\ndestinations: []\n', {})).toEqual({ sources: [], destinations: [] });
    expect(parseConfigYaml('{}', {})).toEqual({});
    // `null` written out is a document, and the config model refuses it as not an object.
    expect(parseConfigYaml('null', {})).toBeNull();
    expect(issuesOf(() => parseConfigDocument(parseConfigYaml('~', {})))).toEqual([{ path: '', message: 'must be an object with "sources" and "destinations" lists' }]);
  });

  it('reports YAML syntax errors with line and column', () => {
    const issues = issuesOf(() => parseConfigYaml('sources:\n  - id: web\n   writeKey: x\n', {}));
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]?.path).toMatch(/^line 3, column \d+$/);
  });

  it('refuses duplicate keys', () => {
    const issues = issuesOf(() => parseConfigYaml('sources: []\nsources: []\n', {}));
    expect(issues).toEqual([{ path: 'line 2, column 1', message: expect.stringMatching(/unique/i) }]);
  });
});

describe('loadConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-config-'));

  it('reads a file', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, designExample);
    const document = (await loadConfigFile(file, { CRM_SECRET: 'a', CRM_TOKEN: 'b' })) as { sources: unknown[] };
    expect(document.sources).toHaveLength(1);
  });

  it('names the file in every error', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, designExample);
    const error = await loadConfigFile(file, {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).message).toBe(
      `${file} is not a valid Tributary config:\n` +
        '  - destinations[0].settings.sharedSecret: refers to environment variable CRM_SECRET, which is not set\n' +
        '  - destinations[0].settings.webhooks[0].headers.Authorization: refers to environment variable CRM_TOKEN, which is not set',
    );
    const missing = await loadConfigFile(join(dir, 'missing.yaml'), {}).catch((caught: unknown) => caught);
    expect((missing as ConfigFileError).message).toBe(`${join(dir, 'missing.yaml')} is not a valid Tributary config:\n  - cannot be read: ENOENT`);
    expect((missing as ConfigFileError).unreadable).toBe(true);
    expect((error as ConfigFileError).unreadable).toBe(false);
  });

  it('names an empty file', async () => {
    const file = join(dir, 'empty.yaml');
    writeFileSync(file, '# all commented out\n# sources: []\n');
    const error = await loadConfigFile(file, {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).message).toBe(
      `${file} is not a valid Tributary config:\n  - is empty; to apply an empty configuration on purpose, write "sources: []" and "destinations: []"`,
    );
  });
});
