// Contract rules beyond Redocly's, checked on the bundled document (generated/openapi.json):
// section tags, scopes, 400/401/403/404/default responses, ErrorResponse on every 4xx, examples present and
// valid, deprecation headers on /v1/channels, and no JSON Schema keywords our draft-07 validators ignore.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { documentPath, listOperations, type OpenApiDocument } from '../src/http/document.ts';

const SECTIONS = ['Common', 'Sender IDs', 'Programs', 'Blasts', 'Bots', 'Dictionaries', 'Contacts', 'Compliance', 'Templates', 'Conversations', 'Analytics', 'Webhooks', 'API Keys', 'Events', 'Submissions', 'MCP'];
const PUBLIC = new Set(['GET /health', 'POST /public/acquisition/{campaignId}/enroll']);
const SCOPE_RE = /^(role:(brand_admin|platform_admin)|[a-z][a-z-]*:(read|create|update|delete|send))$/;
const DRAFT7_UNKNOWN = ['prefixItems', 'unevaluatedProperties', 'unevaluatedItems', '$dynamicRef', '$dynamicAnchor', 'dependentSchemas'];

type Json = Record<string, any>;

export function checkDocument(doc: Json): string[] {
  const problems: string[] = [];
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(doc, 'doc');
  const deref = (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let i = 0; n?.$ref && i < 20; i++) n = String(n.$ref).slice(2).split('/').reduce((a: Json, p) => a?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return n;
  };
  const validateExample = (where: string, schema: Json | undefined, example: unknown) => {
    if (!schema) return;
    let validate;
    if (schema.$ref) validate = ajv.getSchema(`doc${schema.$ref}`) ?? ajv.compile({ $ref: `doc${schema.$ref}` });
    else {
      doc.__inline = schema;
      ajv.removeSchema('doc');
      ajv.addSchema(doc, 'doc');
      validate = ajv.compile({ $ref: 'doc#/__inline' });
    }
    if (!validate(example)) problems.push(`${where}: example does not match its schema: ${ajv.errorsText(validate.errors)}`);
  };
  const exampleOf = (media: Json): unknown[] => {
    if (media.example !== undefined) return [media.example];
    if (media.examples) return Object.values(media.examples).map((e: any) => deref(e)?.value);
    const schema = deref(media.schema);
    if (schema?.examples?.length) return [schema.examples[0]];
    return [];
  };

  for (const op of listOperations(doc as OpenApiDocument)) {
    const where = `${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
    const operation = doc.paths[op.path][op.method] as Json;
    const tags: string[] = operation.tags ?? [];
    if (tags.length !== 1 || !SECTIONS.includes(tags[0]!)) problems.push(`${where}: needs exactly one section tag (got ${JSON.stringify(tags)})`);
    const isPublic = PUBLIC.has(`${op.method.toUpperCase()} ${op.path}`);
    const responses = operation.responses as Json;
    if (isPublic) {
      if (!Array.isArray(operation.security) || operation.security.length !== 0) problems.push(`${where}: must declare security: []`);
    } else {
      if (!Array.isArray(operation.security) || operation.security.length === 0) problems.push(`${where}: must declare its security requirement`);
      for (const req of op.scopes) {
        if (req.length === 0) problems.push(`${where}: security requirement lists no scope`);
        for (const s of req) if (!SCOPE_RE.test(s)) problems.push(`${where}: scope "${s}" is not <area>:<verb> or a role`);
      }
      for (const code of ['400', '401', '403']) if (!responses[code]) problems.push(`${where}: missing ${code} response`);
    }
    if (/\{[^}]+\}/.test(op.path) && !responses['404']) problems.push(`${where}: path has parameters but no 404 response`);
    if (!responses.default) problems.push(`${where}: missing default (Error) response`);
    for (const [code, r] of Object.entries(responses)) {
      const resp = deref(r as Json)!;
      if (/^4\d\d$/.test(code)) {
        // ErrorResponse itself, or a schema built on it (allOf) such as SenderIdPurchaseNumberConflict.
        const schema = resp.content?.['application/json']?.schema;
        const named = schema?.$ref ? deref(schema) : schema;
        if (!schema || !(schema.$ref === '#/components/schemas/ErrorResponse' || JSON.stringify(named).includes('#/components/schemas/ErrorResponse'))) {
          problems.push(`${where}: ${code} must be an ErrorResponse`);
        }
      }
      if (/^2\d\d$/.test(code) && resp.content) {
        for (const [type, media] of Object.entries(resp.content as Json)) {
          const examples = exampleOf(media as Json);
          if (examples.length === 0) problems.push(`${where}: ${code} ${type} has no example`);
          if (type.includes('json')) for (const ex of examples) validateExample(`${where} ${code}`, (media as Json).schema, ex);
        }
      }
      if (op.path.startsWith('/v1/channels') && /^2\d\d$/.test(code)) {
        if (!resp.headers?.Deprecation || !resp.headers?.Sunset) problems.push(`${where}: ${code} must declare Deprecation and Sunset headers`);
      }
    }
    if (op.path.startsWith('/v1/channels') && operation.deprecated !== true) problems.push(`${where}: must be deprecated: true`);
    const body = deref(operation.requestBody);
    for (const [type, media] of Object.entries((body?.content ?? {}) as Json)) {
      const examples = exampleOf(media as Json);
      if (examples.length === 0) problems.push(`${where}: request ${type} has no example`);
      if (type.includes('json')) for (const ex of examples) validateExample(`${where} request`, (media as Json).schema, ex);
    }
  }
  delete doc.__inline;
  const text = JSON.stringify(doc);
  for (const kw of DRAFT7_UNKNOWN) if (text.includes(`"${kw}"`)) problems.push(`document uses "${kw}", which our draft-07 validators (openapi-backend, Prism) ignore`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = JSON.parse(readFileSync(documentPath, 'utf8')) as Json;
  const problems = checkDocument(doc);
  for (const p of problems) console.error(`spec-rules: ${p}`);
  const count = listOperations(doc as OpenApiDocument).length;
  console.log(`spec-rules: ${count} operations checked, ${problems.length} problem(s)`);
  process.exit(problems.length ? 1 : 0);
}
