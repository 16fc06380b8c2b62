// $ref resolution for the spec differ: turns a multi-file (or in-memory) OpenAPI document into one object graph
// without $ref nodes. A recursive schema becomes a cyclic graph (the same JS object is reachable from itself), which
// the differ handles; a $ref chain that never reaches content (A -> B -> A) is an error.
// Own resolver on top of `yaml` rather than @redocly/openapi-core: that package is only a transitive dependency here
// (of redoc/openapi-typescript, v1 while the CLI is v2), and the differ needs nothing but plain $ref following.
import path from 'node:path';
import { parse } from 'yaml';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a file's text given its absolute path (the working tree, or `git show` for an old revision). */
export type ReadText = (absPath: string) => string;

type GetFile = (file: string) => unknown;

// Reference Object siblings that do not change meaning (OpenAPI 3.1 lets summary/description override the target's).
const ANNOTATION_SIBLINGS = new Set(['$ref', 'summary', 'description', 'example', 'examples', '$comment']);

const MEMORY = '<memory>';

/** Loads `rootPath` and every file it references (relative $refs), returning the dereferenced document. */
export function loadDereferenced(rootPath: string, read: ReadText): unknown {
  const files = new Map<string, unknown>();
  const getFile: GetFile = (file) => {
    if (!files.has(file)) {
      let text: string;
      try {
        text = read(file);
      } catch (err) {
        throw new Error(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
      }
      try {
        files.set(file, parse(text));
      } catch (err) {
        throw new Error(`cannot parse ${file}: ${(err as Error).message}`, { cause: err });
      }
    }
    return files.get(file);
  };
  const root = path.resolve(rootPath);
  return dereference(getFile(root), root, getFile);
}

/** Dereferences a single in-memory document; only internal refs (`#/...`) are allowed. */
export function dereferenceInMemory(doc: unknown): unknown {
  return dereference(doc, MEMORY, (file) => {
    if (file === MEMORY) return doc;
    throw new Error(`external $ref to ${file} in an in-memory document`);
  });
}

function dereference(root: unknown, rootFile: string, getFile: GetFile): unknown {
  // raw parsed node -> its dereferenced copy. Set before recursing into children so that cycles find it.
  const done = new Map<unknown, unknown>();
  // ref targets being followed right now whose result is not known yet: re-entering one means a content-less loop.
  const following = new Set<string>();

  const walk = (node: unknown, file: string): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    const hit = done.get(node);
    if (hit !== undefined) return hit;
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      done.set(node, out);
      for (const item of node) out.push(walk(item, file));
      return out;
    }
    const obj = node as Obj;
    if (typeof obj.$ref === 'string') {
      const target = followRef(obj.$ref, file);
      const extra = Object.keys(obj).filter((k) => !ANNOTATION_SIBLINGS.has(k));
      // 3.1 allows keywords next to $ref in a schema; they apply together with the target, i.e. an allOf.
      let out: unknown = target;
      if (extra.length > 0) {
        const merged: Obj = { allOf: [target] };
        for (const k of extra) merged[k] = walk(obj[k], file);
        out = merged;
      }
      done.set(node, out);
      return out;
    }
    const out: Obj = {};
    done.set(node, out);
    for (const [k, v] of Object.entries(obj)) out[k] = walk(v, file);
    return out;
  };

  const followRef = (ref: string, file: string): unknown => {
    const { targetFile, pointer } = splitRef(ref, file);
    const key = `${targetFile}#${pointer}`;
    const raw = resolvePointer(getFile(targetFile), pointer, key);
    const hit = typeof raw === 'object' && raw !== null ? done.get(raw) : undefined;
    if (hit !== undefined) return hit;
    if (following.has(key)) throw new Error(`$ref loop without content at ${key}`);
    following.add(key);
    try {
      return walk(raw, targetFile);
    } finally {
      following.delete(key);
    }
  };

  return walk(root, rootFile);
}

function splitRef(ref: string, file: string): { targetFile: string; pointer: string } {
  const hash = ref.indexOf('#');
  const filePart = hash === -1 ? ref : ref.slice(0, hash);
  const pointer = hash === -1 ? '' : ref.slice(hash + 1);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(filePart)) throw new Error(`remote $ref not supported: ${ref}`);
  if (filePart === '') return { targetFile: file, pointer };
  if (file === MEMORY) return { targetFile: filePart, pointer };
  return { targetFile: path.resolve(path.dirname(file), decodeURIComponent(filePart)), pointer };
}

function resolvePointer(doc: unknown, pointer: string, key: string): unknown {
  if (pointer === '' || pointer === '/') return doc;
  if (!pointer.startsWith('/')) throw new Error(`unsupported $ref fragment (not a JSON pointer): ${key}`);
  let cur: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObj(cur)) cur = cur[seg];
    else cur = undefined;
    if (cur === undefined) throw new Error(`$ref target not found: ${key}`);
  }
  return cur;
}
