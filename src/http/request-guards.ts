// Checks on what a client sends that the document's schemas cannot express, run before validation so a
// client's mistake is a 400 and never reaches a place where it would become a 500: malformed percent-encoding
// (decodeURIComponent throws), NUL characters (PostgreSQL refuses them in text), numbers JSON cannot carry
// (`1e400` parses to Infinity and would be stored as null), lone surrogates (`"\ud800"` is not valid JSON for
// PostgreSQL) and nesting deep enough to exhaust a recursive walk.
import { ApiError, type FieldError } from '../domain/errors.ts';

/** Deeper JSON than this is refused; no document schema nests half as deep. */
const MAX_JSON_DEPTH = 32;

/** At most this many failing fields are reported in one answer (validation of a huge body stays bounded). */
export const MAX_REPORTED_ERRORS = 20;

/** 400 unless every percent-escape of the path and the query decodes to valid UTF-8. */
export function assertUrlEncoding(url: string): void {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!decodes(path)) throw malformed('path', 'has malformed percent-encoding');
  if (q !== -1) {
    for (const part of url.slice(q + 1).split('&')) {
      const eq = part.indexOf('=');
      const name = eq === -1 ? part : part.slice(0, eq);
      if (!decodes(part.replaceAll('+', ' '))) throw malformed(`query.${safeName(name)}`, 'has malformed percent-encoding');
    }
  }
  if (url.includes('%00')) throw malformed(q === -1 || url.indexOf('%00') < q ? 'path' : 'query', 'must not contain NUL characters');
}

function decodes(s: string): boolean {
  if (!s.includes('%')) return true;
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

function safeName(name: string): string {
  try {
    return decodeURIComponent(name).slice(0, 64) || '(empty)';
  } catch {
    return '(malformed)';
  }
}

/**
 * 400 for a parsed body (JSON or multipart fields) holding a NUL character, a non-finite number, or nesting
 * deeper than MAX_JSON_DEPTH. Iterative, so no input can exhaust the stack; stops at the first problem. One frame
 * per enclosing array or object (at most MAX_JSON_DEPTH), and a field's path is only spelled out for the answer:
 * nothing is allocated per value, so 1.7 million empty objects (a 5 MB body) take tens of milliseconds.
 */
export function assertStorableValue(value: unknown, root = 'body'): void {
  type Frame = { node: Record<string, unknown> | unknown[]; keys: string[] | undefined; next: number };
  const frames: Frame[] = [];
  /** The path of the value being looked at: `root`, then the field or index taken at each enclosing frame. */
  const pathOf = (depth = frames.length) =>
    [root, ...frames.slice(0, depth).map((f) => (f.keys ? f.keys[f.next - 1]! : String(f.next - 1)))].join('.');
  const look = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.includes('\u0000')) throw malformed(pathOf(), 'must not contain NUL characters');
      if (!v.isWellFormed()) throw malformed(pathOf(), 'must be valid Unicode (it holds a lone surrogate)');
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw malformed(pathOf(), 'must be a finite number');
    } else if (v !== null && typeof v === 'object') {
      if (frames.length >= MAX_JSON_DEPTH) throw malformed(pathOf(), `nests deeper than ${MAX_JSON_DEPTH} levels`);
      if (Array.isArray(v)) {
        if (v.length > 0) frames.push({ node: v, keys: undefined, next: 0 });
      } else {
        const keys = Object.keys(v);
        if (keys.length > 0) frames.push({ node: v as Record<string, unknown>, keys, next: 0 });
      }
    }
  };
  look(value);
  while (frames.length > 0) {
    const top = frames[frames.length - 1]!;
    const size = top.keys ? top.keys.length : (top.node as unknown[]).length;
    if (top.next >= size) {
      frames.pop();
      continue;
    }
    const key = top.keys ? top.keys[top.next]! : top.next;
    if (typeof key === 'string' && (key.includes('\u0000') || !key.isWellFormed())) {
      throw malformed(pathOf(frames.length - 1), 'must not have a field name with a NUL character or a lone surrogate');
    }
    top.next++;
    look((top.node as Record<string | number, unknown>)[key]);
  }
}

function malformed(field: string, message: string): ApiError {
  const details: FieldError[] = [{ field, message, code: 'malformed' }];
  return new ApiError(400, 'VALIDATION_ERROR', `Request ${field} ${message}.`, { details });
}
