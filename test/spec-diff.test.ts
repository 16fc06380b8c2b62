// Tests for the OpenAPI differ behind `npm run spec:diff` (scripts/spec-diff/). Documents are small inline objects
// (one base document, each test changes a copy) plus a multi-file fixture under test/fixtures/spec-diff/; one test
// drives the CLI in a temporary git repository.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffSpecs, type Change } from '../scripts/spec-diff/diff.ts';
import { dereferenceInMemory, loadDereferenced } from '../scripts/spec-diff/deref.ts';
import { isAcknowledged, parseAcknowledgements } from '../scripts/spec-diff/changelog.ts';
import { renderReport } from '../scripts/spec-diff/report.ts';

// Fixture documents are free-form JSON that each test edits in place.
type Doc = any;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function baseDoc(): Doc {
  return {
    openapi: '3.1.0',
    info: { title: 'fixture', version: '1.0.0' },
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Contact: {
          type: 'object',
          required: ['id', 'name', 'status'],
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            email: { type: ['string', 'null'] },
            status: { type: 'string', enum: ['active', 'blocked'] },
            count: { type: 'integer' },
            address: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, zip: { type: 'string' } } },
            channel: {
              oneOf: [
                { type: 'object', properties: { sms: { type: 'string' } } },
                { type: 'object', properties: { rcs: { type: 'string' } } },
              ],
            },
            parent: ref('Contact'), // recursive on purpose
          },
        },
        ContactBody: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', maxLength: 100 },
            email: { type: ['string', 'null'] },
            score: { type: 'number', minimum: 0, maximum: 10 },
            channel: { type: 'string', enum: ['sms', 'rcs'] },
            note: { type: 'string' },
          },
        },
      },
    },
    paths: {
      '/v1/contacts': {
        get: {
          security: [{ apiKey: ['contacts:read'] }],
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } },
            { name: 'status', in: 'query', schema: { type: 'string', enum: ['active', 'blocked'] } },
          ],
          responses: {
            '200': json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('Contact') } } }),
            '400': json({ type: 'object' }),
          },
        },
        post: {
          security: [{ apiKey: ['contacts:create'] }],
          requestBody: { required: true, ...json(ref('ContactBody')) },
          responses: { '201': json(ref('Contact')) },
        },
      },
      '/v1/contacts/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { '200': json(ref('Contact')) } },
        patch: {
          requestBody: json({ type: 'object', properties: { name: { type: 'string' } } }),
          responses: { '200': json(ref('Contact')) },
        },
        delete: { responses: { '204': { description: 'Deleted.' } } },
      },
    },
    webhooks: {
      'contact.created': {
        post: {
          requestBody: json({
            type: 'object',
            required: ['id', 'type', 'data'],
            properties: { id: { type: 'string' }, type: { type: 'string', const: 'contact.created' }, data: ref('Contact') },
          }),
          responses: { '200': { description: 'Acknowledged.' } },
        },
      },
    },
  };
}

function diffAfter(edit: (doc: Doc) => void): Change[] {
  const next = baseDoc();
  edit(next);
  return diffSpecs(baseDoc(), next);
}

const breaking = (changes: Change[]) => changes.filter((c) => c.breaking);
const line = (c: Change) => `${c.kind} ${c.method} ${c.path} ${c.location}`;

/** Asserts the edit yields a breaking change with this kind on this operation (and location, if given). */
function expectBreaking(edit: (doc: Doc) => void, kind: string, operation: string, location?: string): Change[] {
  const changes = diffAfter(edit);
  const hit = breaking(changes).find(
    (c) => c.kind === kind && `${c.method} ${c.path}` === operation && (location === undefined || c.location === location),
  );
  expect(hit, `expected ${kind} ${operation} ${location ?? ''}; got:\n${changes.map(line).join('\n')}`).toBeDefined();
  return changes;
}

describe('spec-diff: unchanged and renamed', () => {
  it('reports nothing for identical documents (with a recursive schema)', () => {
    expect(diffSpecs(baseDoc(), baseDoc())).toEqual([]);
  });

  it('treats a path parameter rename as the same operation', () => {
    const changes = diffAfter((d) => {
      const item = d.paths['/v1/contacts/{id}'];
      item.parameters[0].name = 'contactId';
      delete d.paths['/v1/contacts/{id}'];
      d.paths['/v1/contacts/{contactId}'] = item;
    });
    expect(changes).toEqual([]);
  });

  it('merges allOf, so splitting a schema into allOf parts changes nothing', () => {
    const changes = diffAfter((d) => {
      const { properties } = d.components.schemas.Contact;
      const { id, name, ...rest } = properties;
      d.components.schemas.Contact = {
        allOf: [
          { type: 'object', required: ['id'], properties: { id, name } },
          { type: 'object', required: ['name', 'status'], properties: rest },
        ],
      };
    });
    expect(changes).toEqual([]);
  });
});

describe('spec-diff: operations', () => {
  it('operation removed is breaking, operation added is not', () => {
    expectBreaking((d) => delete d.paths['/v1/contacts/{id}'].delete, 'operation-removed', 'DELETE /v1/contacts/{id}', '-');
    const added = diffAfter((d) => (d.paths['/v1/tags'] = { get: { responses: { '200': json({ type: 'object' }) } } }));
    expect(added.map(line)).toEqual(['operation-added GET /v1/tags -']);
    expect(breaking(added)).toEqual([]);
  });
});

describe('spec-diff: request', () => {
  it('new required parameter', () => {
    expectBreaking(
      (d) => d.paths['/v1/contacts'].get.parameters.push({ name: 'q', in: 'query', required: true, schema: { type: 'string' } }),
      'parameter-added-required',
      'GET /v1/contacts',
      'query.q',
    );
  });

  it('existing parameter becoming required', () => {
    expectBreaking(
      (d) => (d.paths['/v1/contacts'].get.parameters[0].required = true),
      'parameter-became-required',
      'GET /v1/contacts',
      'query.page',
    );
  });

  it('removed parameter: breaking for a path parameter only', () => {
    expectBreaking((d) => (d.paths['/v1/contacts/{id}'].parameters = []), 'parameter-removed', 'GET /v1/contacts/{id}', 'path.id');
    const query = diffAfter((d) => d.paths['/v1/contacts'].get.parameters.splice(1, 1));
    expect(query.map((c) => [c.breaking, c.kind, c.location])).toEqual([[false, 'parameter-removed', 'query.status']]);
  });

  it('enum value removed from a parameter', () => {
    expectBreaking(
      (d) => (d.paths['/v1/contacts'].get.parameters[1].schema.enum = ['active']),
      'request-enum-value-removed',
      'GET /v1/contacts',
      'query.status',
    );
  });

  it('new required request body field', () => {
    expectBreaking(
      (d) => {
        const body = d.components.schemas.ContactBody;
        body.properties.phone = { type: 'string' };
        body.required.push('phone');
      },
      'request-field-added-required',
      'POST /v1/contacts',
      'body[application/json].phone',
    );
  });

  it('existing request field becoming required', () => {
    expectBreaking(
      (d) => d.components.schemas.ContactBody.required.push('email'),
      'request-field-became-required',
      'POST /v1/contacts',
      'body[application/json].email',
    );
  });

  it('request field type narrowed: null dropped, number -> integer, type removed from a union', () => {
    const op = 'POST /v1/contacts';
    expectBreaking(
      (d) => (d.components.schemas.ContactBody.properties.email.type = 'string'),
      'request-type-narrowed',
      op,
      'body[application/json].email',
    );
    expectBreaking(
      (d) => (d.components.schemas.ContactBody.properties.score.type = 'integer'),
      'request-type-narrowed',
      op,
      'body[application/json].score',
    );
    expectBreaking(
      (d) => (d.components.schemas.ContactBody.properties.note.enum = ['a']),
      'request-enum-value-removed',
      op,
      'body[application/json].note',
    );
  });

  it('enum value removed from a request field', () => {
    expectBreaking(
      (d) => (d.components.schemas.ContactBody.properties.channel.enum = ['sms']),
      'request-enum-value-removed',
      'POST /v1/contacts',
      'body[application/json].channel',
    );
  });

  it('tightened bounds and a new pattern', () => {
    const op = 'POST /v1/contacts';
    const props = (d: Doc) => d.components.schemas.ContactBody.properties;
    expectBreaking((d) => (props(d).name.maxLength = 50), 'request-constraint-tightened', op, 'body[application/json].name');
    expectBreaking((d) => (props(d).score.maximum = 5), 'request-constraint-tightened', op, 'body[application/json].score');
    expectBreaking((d) => (props(d).score.minimum = 1), 'request-constraint-tightened', op, 'body[application/json].score');
    expectBreaking((d) => (props(d).note.minLength = 3), 'request-constraint-tightened', op, 'body[application/json].note');
    expectBreaking((d) => (props(d).note.pattern = '^[a-z]+$'), 'request-constraint-tightened', op, 'body[application/json].note');
  });

  it('request body becoming required', () => {
    expectBreaking(
      (d) => (d.paths['/v1/contacts/{id}'].patch.requestBody.required = true),
      'request-body-required',
      'PATCH /v1/contacts/{id}',
      'body',
    );
  });

  it('removed request field is breaking only when unknown fields are rejected', () => {
    expectBreaking((d) => delete d.components.schemas.ContactBody.properties.note, 'request-field-removed', 'POST /v1/contacts');
    const open = diffAfter((d) => delete d.paths['/v1/contacts/{id}'].patch.requestBody.content['application/json'].schema.properties.name);
    expect(open.map((c) => [c.breaking, c.kind])).toEqual([[false, 'request-field-removed']]);
  });
});

describe('spec-diff: responses', () => {
  it('field removed from a nested response object (through arrays and $refs)', () => {
    const changes = expectBreaking(
      (d) => delete d.components.schemas.Contact.properties.address.properties.zip,
      'response-field-removed',
      'GET /v1/contacts',
      '200[application/json].data[].address.zip',
    );
    // Every operation and the webhook sharing Contact reports it.
    expect(new Set(breaking(changes).map((c) => `${c.method} ${c.path}`))).toEqual(
      new Set(['GET /v1/contacts', 'POST /v1/contacts', 'GET /v1/contacts/{id}', 'PATCH /v1/contacts/{id}', 'WEBHOOK contact.created']),
    );
  });

  it('field no longer required in a response', () => {
    expectBreaking(
      (d) => (d.components.schemas.Contact.required = ['id', 'name']),
      'response-field-became-optional',
      'GET /v1/contacts/{id}',
      '200[application/json].status',
    );
  });

  it('response type widened or changed', () => {
    expectBreaking(
      (d) => (d.components.schemas.Contact.properties.name.type = ['string', 'null']),
      'response-type-changed',
      'GET /v1/contacts/{id}',
      '200[application/json].name',
    );
    expectBreaking(
      (d) => (d.components.schemas.Contact.properties.count.type = 'number'),
      'response-type-changed',
      'GET /v1/contacts/{id}',
      '200[application/json].count',
    );
    expectBreaking(
      (d) => (d.components.schemas.Contact.properties.id.type = 'integer'),
      'response-type-changed',
      'GET /v1/contacts/{id}',
      '200[application/json].id',
    );
  });

  it('enum value removed from a response', () => {
    expectBreaking(
      (d) => (d.components.schemas.Contact.properties.status.enum = ['active']),
      'response-enum-value-removed',
      'GET /v1/contacts/{id}',
      '200[application/json].status',
    );
  });

  it('2xx status removed (201 -> 200); a 4xx change is ignored', () => {
    const changes = expectBreaking(
      (d) => {
        const post = d.paths['/v1/contacts'].post;
        post.responses = { '200': post.responses['201'] };
        delete d.paths['/v1/contacts'].get.responses['400'];
      },
      'response-status-removed',
      'POST /v1/contacts',
      '201',
    );
    expect(changes.map(line)).toEqual(['response-status-removed POST /v1/contacts 201', 'response-status-added POST /v1/contacts 200']);
  });

  it('response media type removed', () => {
    expectBreaking(
      (d) => {
        const r = d.paths['/v1/contacts/{id}'].get.responses['200'];
        r.content = { 'text/csv': { schema: { type: 'string' } } };
      },
      'response-media-type-removed',
      'GET /v1/contacts/{id}',
      '200[application/json]',
    );
  });

  it('oneOf compared by index: a new variant in a response is breaking, a change inside one is found', () => {
    const channel = (d: Doc) => d.components.schemas.Contact.properties.channel;
    expectBreaking(
      (d) => channel(d).oneOf.push({ type: 'string' }),
      'response-type-changed',
      'GET /v1/contacts/{id}',
      '200[application/json].channel',
    );
    expectBreaking(
      (d) => delete channel(d).oneOf[1].properties.rcs,
      'response-field-removed',
      'GET /v1/contacts/{id}',
      '200[application/json].channel<oneOf#1>.rcs',
    );
  });

  it('terminates on recursive schemas and reports a change inside the recursion', () => {
    const changes = expectBreaking(
      (d) => delete d.components.schemas.Contact.properties.email,
      'response-field-removed',
      'GET /v1/contacts/{id}',
      '200[application/json].email',
    );
    // parent is the same schema: the pair repeats and the walk stops instead of reporting parent.parent.…
    expect(changes.some((c) => c.location.includes('.parent.'))).toBe(false);
  });
});

describe('spec-diff: security and webhooks', () => {
  it('a new required scope is breaking; a new alternative is not', () => {
    expectBreaking(
      (d) => (d.paths['/v1/contacts'].get.security = [{ apiKey: ['contacts:read', 'contacts:export'] }]),
      'security-scope-added',
      'GET /v1/contacts',
      'security',
    );
    const alternative = diffAfter((d) => d.paths['/v1/contacts'].get.security.push({ apiKey: ['role:platform_admin'] }));
    expect(alternative).toEqual([]);
  });

  it('an operation that inherited the root security and now needs a scope', () => {
    expectBreaking(
      (d) => (d.paths['/v1/contacts/{id}'].get.security = [{ apiKey: ['contacts:read'] }]),
      'security-scope-added',
      'GET /v1/contacts/{id}',
    );
  });

  it('a public operation that now needs authentication', () => {
    const changes = diffAfter((d) => {
      d.paths['/health'] = { get: { security: [], responses: { '200': json({ type: 'object' }) } } };
    });
    expect(changes.map(line)).toEqual(['operation-added GET /health -']);
    const next = baseDoc();
    next.paths['/health'] = { get: { responses: { '200': json({ type: 'object' }) } } }; // inherits root security
    const before = baseDoc();
    before.paths['/health'] = { get: { security: [], responses: { '200': json({ type: 'object' }) } } };
    const [change] = diffSpecs(before, next);
    expect(change).toMatchObject({ breaking: true, kind: 'security-scope-added', method: 'GET', path: '/health' });
    expect(change?.detail).toMatch(/scheme apiKey .*was: anonymous access/);
  });

  it('webhook event removed', () => {
    expectBreaking((d) => delete d.webhooks['contact.created'], 'webhook-removed', 'WEBHOOK contact.created', '-');
  });

  it('webhook payload field removed', () => {
    expectBreaking(
      (d) => delete d.webhooks['contact.created'].post.requestBody.content['application/json'].schema.properties.id,
      'payload-field-removed',
      'WEBHOOK contact.created',
      'payload[application/json].id',
    );
  });
});

describe('spec-diff: additive changes', () => {
  it('new operation, optional request field and parameter, response field and response enum value: zero breaking', () => {
    const changes = diffAfter((d) => {
      d.paths['/v1/tags'] = { get: { responses: { '200': json({ type: 'object' }) } } };
      d.components.schemas.ContactBody.properties.locale = { type: 'string' };
      d.paths['/v1/contacts'].get.parameters.push({ name: 'q', in: 'query', schema: { type: 'string' } });
      d.components.schemas.Contact.properties.createdAt = { type: 'string', format: 'date-time' };
      d.components.schemas.Contact.properties.status.enum.push('archived');
      d.components.schemas.ContactBody.properties.channel.enum.push('mms');
      d.components.schemas.ContactBody.properties.name.maxLength = 200;
      d.components.schemas.ContactBody.properties.score.type = ['number', 'null'];
      d.webhooks['contact.deleted'] = d.webhooks['contact.created'];
    });
    expect(breaking(changes)).toEqual([]);
    const kinds = new Set(changes.map((c) => c.kind));
    for (const k of [
      'operation-added',
      'request-field-added',
      'parameter-added',
      'response-field-added',
      'response-enum-value-added',
      'request-enum-value-added',
      'request-type-widened',
      'payload-field-added',
      'webhook-added',
    ]) {
      expect(kinds, k).toContain(k);
    }
  });
});

describe('spec-diff: $ref loading', () => {
  const fixtures = path.resolve(import.meta.dirname, 'fixtures/spec-diff');
  const load = (version: string) => loadDereferenced(path.join(fixtures, version, 'openapi.yaml'), (f) => readFileSync(f, 'utf8'));

  it('follows $refs across files and keeps recursion as a cycle', () => {
    const doc = load('v1') as Doc;
    const folder = doc.paths['/v1/folders/{id}'].get.responses['200'].content['application/json'].schema;
    expect(folder.required).toEqual(['id', 'name', 'children']);
    expect(folder.properties.children.items).toBe(folder);
    expect(doc.webhooks['folder.updated'].post.requestBody.content['application/json'].schema.properties.data).toBe(folder);
  });

  it('diffs two multi-file revisions (renamed path parameter, field removed in a recursive schema)', () => {
    const changes = diffSpecs(load('v1'), load('v2'));
    expect(changes.map((c) => `${c.breaking ? 'B' : 'ok'} ${line(c)}`)).toEqual([
      'B response-field-removed GET /v1/folders/{folderId} 200[application/json].color',
      'ok response-field-added GET /v1/folders/{folderId} 200[application/json].icon',
      'B payload-field-removed WEBHOOK folder.updated payload[application/json].data.color',
      'ok payload-field-added WEBHOOK folder.updated payload[application/json].data.icon',
    ]);
  });

  it('rejects a $ref loop that never reaches content', () => {
    expect(() => dereferenceInMemory({ a: { $ref: '#/b' }, b: { $ref: '#/a' } })).toThrow(/loop/);
  });

  it('reports a missing $ref target', () => {
    expect(() => dereferenceInMemory({ a: { $ref: '#/nope' } })).toThrow(/not found: .*#\/nope/);
  });
});

describe('spec-diff: changelog acknowledgement', () => {
  const removed: Change = {
    breaking: true,
    kind: 'response-field-removed',
    method: 'GET',
    path: '/v1/contacts/{id}',
    location: '200[application/json].email',
    detail: 'removed',
  };
  const changelog = [
    '# Changelog',
    '- BREAKING: operation-removed DELETE /v1/contacts/{id} (header example: does not count)',
    '## Unreleased',
    '### Contacts',
    '- BREAKING: `response-field-removed` `GET /v1/contacts/{contactId}` email moved to channels.',
    '- BREAKING: payload-field-removed webhook contact.created id is data.id now',
    '- response-type-changed GET /v1/contacts/{id} is not BREAKING: response-type-changed GET /v1/contacts/{id} (mid-line)',
    '## 1.0.0 - 2026-01-01',
    '- BREAKING: response-type-changed GET /v1/contacts/{id} released long ago',
  ].join('\n');
  const acks = parseAcknowledgements(changelog);

  it('only reads BREAKING: lines of the Unreleased section', () => {
    expect(acks.map((a) => `${a.kind} ${a.method} ${a.path}`)).toEqual([
      'response-field-removed GET /v1/contacts/{}',
      'payload-field-removed WEBHOOK contact.created',
    ]);
  });

  it('matches kind, METHOD and path (parameter names ignored)', () => {
    expect(isAcknowledged(removed, acks)).toBe(true);
    expect(isAcknowledged({ ...removed, kind: 'response-type-changed' }, acks)).toBe(false);
    expect(isAcknowledged({ ...removed, method: 'PATCH' }, acks)).toBe(false);
    expect(isAcknowledged({ ...removed, kind: 'payload-field-removed', method: 'WEBHOOK', path: 'contact.created' }, acks)).toBe(true);
  });

  it('exit code 1 only while a breaking change is unacknowledged', () => {
    const additive: Change = { ...removed, breaking: false, kind: 'response-field-added' };
    expect(renderReport([removed, additive], acks).exitCode).toBe(0);
    const report = renderReport([removed, additive], []);
    expect(report.exitCode).toBe(1);
    expect(report.lines[0]).toMatch(
      /^BREAKING  response-field-removed\s+GET \/v1\/contacts\/\{id\}  200\[application\/json\]\.email  removed$/,
    );
    expect(report.lines[1]).toMatch(/^ok {8}response-field-added/);
    expect(report.lines).toContain('  - BREAKING: response-field-removed GET /v1/contacts/{id} <why, what clients must do>');
    expect(renderReport([additive], []).exitCode).toBe(0);
  });

  it('the repository CHANGELOG.md parses (its header example is outside Unreleased)', () => {
    const text = readFileSync(path.resolve(import.meta.dirname, '../CHANGELOG.md'), 'utf8');
    expect(text).toMatch(/^## Unreleased$/m);
    expect(parseAcknowledgements(text).every((a) => a.line > text.split('\n').indexOf('## Unreleased'))).toBe(true);
  });
});

describe('spec-diff: CLI in a temporary git repository', () => {
  it('exits 0 without a base, 1 on an unacknowledged breaking change, 0 once acknowledged', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec-diff-'));
    try {
      const git = (...args: string[]) => {
        const r = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      };
      const cli = (...args: string[]) =>
        spawnSync(process.execPath, [path.resolve(import.meta.dirname, '../scripts/spec-diff.ts'), ...args, '--root', dir], {
          encoding: 'utf8',
        });
      const fixtures = path.resolve(import.meta.dirname, 'fixtures/spec-diff');

      cpSync(path.join(fixtures, 'v1'), dir, { recursive: true });
      git('init', '-q');
      git('add', '-A');
      git('commit', '-qm', 'v1');

      const noBase = cli('HEAD~1');
      expect(noBase.status).toBe(0);
      expect(noBase.stdout).toMatch(/nothing to compare against/);

      rmSync(path.join(dir, 'parts'), { recursive: true });
      cpSync(path.join(fixtures, 'v2'), dir, { recursive: true });
      const broken = cli('HEAD');
      expect(broken.stdout).toMatch(/^BREAKING  response-field-removed\s+GET \/v1\/folders\/\{folderId\}/m);
      expect(broken.status).toBe(1);

      writeFileSync(
        path.join(dir, 'CHANGELOG.md'),
        [
          '# Changelog',
          '## Unreleased',
          '- BREAKING: response-field-removed GET /v1/folders/{id} `color` is gone.',
          '- BREAKING: payload-field-removed WEBHOOK folder.updated `data.color` is gone.',
          '',
        ].join('\n'),
      );
      const acked = cli('HEAD');
      expect(acked.stdout).toMatch(/2 breaking \(2 acknowledged, 0 not\)/);
      expect(acked.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
