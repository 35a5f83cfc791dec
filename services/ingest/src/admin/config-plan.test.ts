import { describe, expect, it } from 'vitest';
import { thrown } from '@tributary/test/harness/thrown';
import type { Destination, Source } from '@tributary/schemas';
import { REDACTED_SECRET, type ConfigState } from '@tributary/shared';
import { planApply, planDelete, planDestinationPut, planSourcePut } from './config-plan.js';
import { AdminError } from './errors.js';

const web: Source = { id: 'web', name: 'Web', writeKey: 'wk_web_0001', enabled: true };
const crm: Destination = {
  id: 'crm',
  name: 'CRM',
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: 's3cret', standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/a', headers: {} }] },
};
const state: ConfigState = { sources: [web], destinations: [crm] };
const crmBody = { id: 'crm', name: 'CRM', type: 'webhooks', sources: ['web'], settings: { sharedSecret: REDACTED_SECRET, webhooks: [{ url: 'https://hooks.example.com/a' }] } };

const refusal = (run: () => unknown): AdminError => thrown(run, AdminError);

describe('source writes', () => {
  it('creates with a POST and refuses an existing id', () => {
    const plan = planSourcePut(state, { id: 'app', writeKey: 'wk_app_0001' }, 'create');
    expect(plan.result.created).toBe(true);
    expect(plan.changes).toEqual([{ action: 'create', kind: 'source', id: 'app' }]);
    expect(plan.writes).toEqual([{ kind: 'source', id: 'app', entity: { id: 'app', name: 'app', writeKey: 'wk_app_0001', enabled: true } }]);
    const conflict = refusal(() => planSourcePut(state, { id: 'web', writeKey: 'wk_web_0002' }, 'create'));
    expect([conflict.status, conflict.code, conflict.message]).toEqual([409, 'already_exists', 'source "web" already exists; PUT /admin/v1/sources/web replaces it']);
  });

  it('replaces with a PUT, takes the id from the URL, and writes nothing when nothing changes', () => {
    const same = planSourcePut(state, { name: 'Web', writeKey: 'wk_web_0001' }, 'replace', 'web');
    expect(same.result.created).toBe(false);
    expect(same.writes).toEqual([]);
    const renamed = planSourcePut(state, { id: 'web', name: 'Web site', writeKey: 'wk_web_0001' }, 'replace', 'web');
    expect(renamed.changes).toEqual([{ action: 'update', kind: 'source', id: 'web', fields: ['name'] }]);
    expect(planSourcePut(state, { writeKey: 'wk_new_0001' }, 'replace', 'new').result.created).toBe(true);
  });

  it('refuses an id that differs from the URL, invalid fields and a taken write key', () => {
    expect(refusal(() => planSourcePut(state, { id: 'other', writeKey: 'wk_web_0001' }, 'replace', 'web')).body()).toEqual({
      error: 'invalid request: id: must match the id in the URL ("web")',
      code: 'invalid_request',
      issues: [{ path: 'id', message: 'must match the id in the URL ("web")' }],
    });
    expect(refusal(() => planSourcePut(state, { id: 'app', writeKey: 'short' }, 'create')).issues).toEqual([{ path: 'writeKey', message: 'must be at least 8 characters' }]);
    expect(refusal(() => planSourcePut(state, { id: 'app', writeKey: 'wk_web_0001' }, 'create')).body()).toEqual({
      error: 'invalid source: writeKey: is already the write key of source "web"; write keys must be unique',
      code: 'invalid_request',
      issues: [{ path: 'writeKey', message: 'is already the write key of source "web"; write keys must be unique' }],
    });
  });
});

describe('destination writes', () => {
  it('keeps the stored secret on a PUT that sends the marker back, and reports what changed', () => {
    const plan = planDestinationPut(state, { ...crmBody, enabled: false }, 'replace', 'crm');
    expect(plan.changes).toEqual([{ action: 'update', kind: 'destination', id: 'crm', fields: ['enabled'] }]);
    expect((plan.writes[0]?.entity as Destination).settings.sharedSecret).toBe('s3cret');
    expect(planDestinationPut(state, crmBody, 'replace', 'crm').writes).toEqual([]);
  });

  it('answers a POST of an existing id with 409 before looking at the rest of the body', () => {
    const error = refusal(() => planDestinationPut(state, { ...crmBody, type: 'other' }, 'create'));
    expect([error.status, error.code]).toEqual([409, 'already_exists']);
  });

  it('keeps no secret on a create that sends the marker', () => {
    const error = refusal(() => planDestinationPut({ ...state, destinations: [] }, crmBody, 'create'));
    expect(error.status).toBe(400);
    expect(error.issues).toEqual([
      { path: 'settings.sharedSecret', message: 'is "[redacted]" (what reads show) but no secret is stored for destination "crm"; give the secret itself' },
    ]);
  });

  it('refuses unknown sources and more than five URLs, with paths', () => {
    expect(refusal(() => planDestinationPut(state, { ...crmBody, sources: ['web', 'ios'] }, 'replace', 'crm')).issues).toEqual([{ path: 'sources[1]', message: 'unknown source "ios"' }]);
    const six = { ...crmBody, settings: { webhooks: Array.from({ length: 6 }, (_, i) => ({ url: `https://hooks.example.com/${i}` })) } };
    expect(refusal(() => planDestinationPut(state, six, 'replace', 'crm')).issues).toEqual([{ path: 'settings.webhooks[5]', message: 'at most 5 webhook URLs per destination' }]);
  });
});

describe('deletes', () => {
  it('deletes with a tombstone', () => {
    expect(planDelete(state, 'destination', 'crm').writes).toEqual([{ kind: 'destination', id: 'crm', entity: null }]);
  });

  it('refuses an unknown id and a source still in use', () => {
    expect(refusal(() => planDelete(state, 'source', 'nope')).body()).toEqual({ error: 'source "nope" does not exist', code: 'not_found', issues: [] });
    expect(refusal(() => planDelete(state, 'source', 'web')).body()).toEqual({
      error: 'source "web" is used by destination "crm"; remove it from their sources first',
      code: 'source_in_use',
      issues: [],
      destinations: ['crm'],
    });
  });
});

describe('apply', () => {
  const document = { sources: [{ id: 'web', name: 'Web', writeKey: 'wk_web_0001' }, { id: 'app', writeKey: 'wk_app_0001' }], destinations: [crmBody] };

  it('writes only what differs, and nothing the second time', () => {
    const plan = planApply(state, document, {});
    expect(plan.changes).toEqual([{ action: 'create', kind: 'source', id: 'app' }]);
    const after: ConfigState = { sources: [web, plan.writes[0]!.entity as Source], destinations: [crm] };
    expect(planApply(after, document, {}).writes).toEqual([]);
  });

  it('prunes what the document leaves out only when asked', () => {
    expect(planApply(state, { sources: [web] }, {}).changes).toEqual([]);
    expect(planApply(state, { sources: [web] }, { prune: true }).writes).toEqual([{ kind: 'destination', id: 'crm', entity: null }]);
  });

  it('names each problem by its path in the document', () => {
    expect(refusal(() => planApply(state, { destinations: [{ ...crmBody, sources: ['nope'] }] }, {})).body()).toEqual({
      error: 'invalid config document: destinations[0].sources[0]: unknown source "nope"',
      code: 'invalid_request',
      issues: [{ path: 'destinations[0].sources[0]', message: 'unknown source "nope"' }],
    });
  });
});
