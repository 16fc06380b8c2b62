// The contract itself: exactly the specification's operations, unique operationIds, one of the 16 section
// tags each, and every rule of scripts/spec-rules.ts (scopes, error responses, valid examples …).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listOperations, loadDocument } from '../src/http/document.ts';
import { checkDocument } from '../scripts/spec-rules.ts';

const doc = loadDocument();
const ops = listOperations(doc);
const tsv = readFileSync(new URL('../../shared/spec/endpoints.tsv', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => line.split('\t') as [string, string, string]);

describe('contract', () => {
  it('has exactly the operations of endpoints.tsv (method + path)', () => {
    const have = ops.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort();
    const want = tsv.map(([, method, path]) => `${method} ${path}`).sort();
    expect(have).toEqual(want);
    expect(have).toHaveLength(194);
  });

  it('gives every operation a unique operationId and the section tag of endpoints.tsv', () => {
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [section, method, path] of tsv) {
      const tags = (doc.paths[path]![method.toLowerCase()] as { tags: string[] }).tags;
      expect(tags, `${method} ${path}`).toEqual([section]);
    }
  });

  it('is OpenAPI 3.1.0, version 1.0.0, and passes every contract rule', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(checkDocument(structuredClone(doc) as never)).toEqual([]);
  });

  it('declares the events we push, each signed and carrying the routing fields', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { parameters: Array<{ $ref?: string; name?: string }> } }> }).webhooks;
    for (const name of ['message.delivered', 'message.read', 'message.button_tapped', 'message.received', 'test']) expect(webhooks[name], name).toBeDefined();
    const text = JSON.stringify(doc);
    for (const header of ['webhook-signature', 'webhook-id', 'webhook-timestamp', 'X-Signature']) expect(text).toContain(header);
    expect(text).toContain('senderIdId');
    expect(text).toContain('contactPhone');
  });
});
