/**
 * TRIBUTARY_CONFIG through the real ingest process: the file is applied (with ${VAR}
 * references from the environment) before the service reports ready, a restart with the
 * same file writes nothing, and an invalid file stops the process naming the file and
 * every problem's path.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { topicNames, type ConfigEntry, type Destination } from '@tributary/schemas';
import { withAdmin } from '@tributary/shared';
import { readTopic, stackEnv, startService, testCodec, testKafka, uniqueNamespace } from '@tributary/test/harness';

const dir = mkdtempSync(join(tmpdir(), 'tributary-startup-'));

const VALID = `
sources:
  - id: web
    name: Web site
    writeKey: wk_startup_web
destinations:
  - id: crm-hooks
    type: webhooks
    sources: [web]
    settings:
      sharedSecret: \${CRM_SECRET}
      webhooks:
        - url: https://hooks.example.com/segment
          headers: { X-Team: growth }
`;

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('start-up apply', () => {
  it('applies the file before ready, and a restart with the same file writes nothing', async () => {
    const namespace = uniqueNamespace('startup');
    const topics = topicNames(namespace);
    const kafka = testKafka();
    const codec = testCodec();
    const env = { ...stackEnv(namespace), TRIBUTARY_CONFIG: file('valid.yaml', VALID), CRM_SECRET: 'from-the-environment' };
    const endOffset = async () => (await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topics.config))).reduce((sum, { high }) => sum + Number(high), 0);

    const first = await startService('ingest', { env });
    try {
      // Ready means applied: both records are on the topic the moment /readyz says 200.
      expect(await endOffset()).toBe(2);
    } finally {
      await first.stop();
    }
    const records = await readTopic(kafka, topics.config, { until: (read) => read.length >= 2 });
    const entities = await Promise.all(records.map(async (r) => (await codec.decode<ConfigEntry>('config', r.message.value!)).entity));
    expect(entities.map((entity) => entity.id)).toEqual(['web', 'crm-hooks']);
    expect((entities[1] as Destination).settings).toEqual({
      sharedSecret: 'from-the-environment',
      standardWebhooksSecret: null,
      webhooks: [{ url: 'https://hooks.example.com/segment', headers: { 'X-Team': 'growth' } }],
    });
    expect(readFileSync(first.logFile, 'utf8')).not.toContain('from-the-environment');

    const second = await startService('ingest', { env });
    try {
      expect(await endOffset()).toBe(2);
      expect(readFileSync(second.logFile, 'utf8')).toContain('config file already in effect');
    } finally {
      await second.stop();
    }
  });

  it('stops the process on an invalid file, naming the file and each problem', async () => {
    const namespace = uniqueNamespace('startup-bad');
    const invalid = file(
      'invalid.yaml',
      `
sources:
  - id: web
    writeKey: wk_startup_web
destinations:
  - id: crm-hooks
    type: webhooks
    sources: [web, ios]
    settings:
      webhooks:
        - url: https://hooks.example.com/1
          headers: { Host: evil.example.com }
        - url: https://hooks.example.com/2
        - url: https://hooks.example.com/3
        - url: https://hooks.example.com/4
        - url: https://hooks.example.com/5
        - url: https://hooks.example.com/6
`,
    );
    const service = await startService('ingest', { env: { ...stackEnv(namespace), TRIBUTARY_CONFIG: invalid }, waitReady: false });
    expect(await service.exited).toBe(2);
    const log = readFileSync(service.logFile, 'utf8');
    expect(log).toContain(`${invalid} is not a valid Tributary config`);
    expect(log).toContain('destinations[0].settings.webhooks[0].headers.Host: \\"Host\\" is set by Tributary and cannot be a static header');
    expect(log).toContain('destinations[0].settings.webhooks[5]: at most 5 webhook URLs per destination');
    const kafka = testKafka();
    const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topicNames(namespace).config));
    expect(offsets.reduce((sum, { high }) => sum + Number(high), 0)).toBe(0);
  });

  it('stops the process when a referenced variable is not set', async () => {
    const service = await startService('ingest', { env: { ...stackEnv(uniqueNamespace('startup-env')), TRIBUTARY_CONFIG: file('env.yaml', VALID) }, waitReady: false });
    expect(await service.exited).toBe(2);
    expect(readFileSync(service.logFile, 'utf8')).toContain('destinations[0].settings.sharedSecret: refers to environment variable CRM_SECRET, which is not set');
  });
});
