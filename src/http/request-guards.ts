// Checks on what a client sends that the document's schemas cannot express, run before validation so a
// client's mistake is a 400 and never reaches a place where it would become a 500: malformed percent-encoding
// (decodeURIComponent throws), NUL characters (PostgreSQL refuses them in text), numbers JSON cannot carry
// (`1e400` parses to Infinity and would be stored as null), lone surrogates (`"\ud800"` is not valid JSON for
// PostgreSQL) and nesting deep enough to exhaust a recursive walk.
import { ApiError, type FieldError } from '../domain/errors.ts';

/** Deeper JSON than this is refused; no document schema nests half as deep. */
export const MAX_JSON_DEPTH = 32;

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
 * deeper than MAX_JSON_DEPTH. Iterative, so no input can exhaust the stack; stops at the first problem.
 */
export function assertStorableValue(value: unknown, root = 'body'): void {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) throw malformed(path, 'must not contain NUL characters');
      if (!v.isWellFormed()) throw malformed(path, 'must be valid Unicode (it holds a lone surrogate)');
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw malformed(path, 'must be a finite number');
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_JSON_DEPTH) throw malformed(path, `nests deeper than ${MAX_JSON_DEPTH} levels`);
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}.${i}`, depth: depth + 1 });
      } else {
        for (const [k, child] of Object.entries(v)) {
          if (k.includes('\u0000') || !k.isWellFormed()) throw malformed(path, 'must not have a field name with a NUL character or a lone surrogate');
          stack.push({ v: child, path: `${path}.${k}`, depth: depth + 1 });
        }
      }
    }
  }
}

function malformed(field: string, message: string): ApiError {
  const details: FieldError[] = [{ field, message, code: 'malformed' }];
  return new ApiError(400, 'VALIDATION_ERROR', `Request ${field} ${message}.`, { details });
}
