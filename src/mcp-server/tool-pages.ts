// tools/list in pages (the protocol's `cursor` / `nextCursor`), built once per set of scopes and kept: a key sees
// the tools its scopes allow, so keys with the same scopes see the same pages, and a tools/list answers a page
// already made (the definitions are shared, never copied). A page holds at most TOOLS_PAGE_BYTES of definitions
// (at least one tool), so no tools/list answer is larger, whatever the catalogue and the key.
//
// A cursor is `<catalogue version>.<page>`: any API process serving the same document answers it the same way
// (the pages are a function of the document and the scopes), and a cursor of another version of the catalogue
// (a server upgraded between two pages) is refused rather than answered with a shifted page.
import { createHash } from 'node:crypto';
import type { ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { keyMayCall } from '../contract/document.ts';
import type { ToolCatalog } from './tool-catalog.ts';

/** The most bytes of tool definitions one tools/list page holds. */
export const TOOLS_PAGE_BYTES = 128 * 1024;
/** Scope sets whose pages are kept (the least recently used go first): enough for every role of a deployment. */
const SCOPE_SETS_KEPT = 256;

export class InvalidCursorError extends Error {}

/** A tools/list answer, made once, and about how many bytes it is as JSON (what a batch counts, batches.ts). */
export type ToolPage = { result: ListToolsResult; bytes: number };

export class ToolPages {
  private readonly version: string;
  private readonly sizes = new Map<string, number>();
  private readonly byScopes = new Map<string, ToolPage[]>();
  /** A key's scope set is one object per cached key row (src/auth/authenticate.ts): its cache key, made once. */
  private readonly keyOf = new WeakMap<ReadonlySet<string>, string>();

  private readonly catalog: ToolCatalog;

  constructor(catalog: ToolCatalog) {
    this.catalog = catalog;
    const hash = createHash('sha256');
    for (const tool of catalog.tools.values()) {
      const json = JSON.stringify(tool.definition);
      this.sizes.set(tool.name, Buffer.byteLength(json));
      hash.update(json);
    }
    this.version = hash.digest('base64url').slice(0, 12);
  }

  /** The page `cursor` names (the first without one) of the tools a key holding `scopes` may call. */
  page(scopes: ReadonlySet<string>, cursor: string | undefined): ToolPage {
    const pages = this.pagesFor(scopes);
    return pages[cursor === undefined ? 0 : this.indexOf(cursor, pages.length)]!;
  }

  private indexOf(cursor: string, pages: number): number {
    const m = /^([A-Za-z0-9_-]{12})\.(\d{1,6})$/.exec(cursor);
    if (!m || m[1] !== this.version)
      throw new InvalidCursorError("is not a cursor of this server's tools/list (the tools may have changed): list again without a cursor");
    const index = Number(m[2]);
    if (index >= pages) throw new InvalidCursorError("names no page of this key's tools: list again without a cursor");
    return index;
  }

  private pagesFor(scopes: ReadonlySet<string>): ToolPage[] {
    let key = this.keyOf.get(scopes);
    if (key === undefined) this.keyOf.set(scopes, (key = [...scopes].sort().join(' ')));
    let pages = this.byScopes.get(key);
    if (pages) {
      this.byScopes.delete(key); // most recently used last
    } else {
      pages = this.build(scopes);
      if (this.byScopes.size >= SCOPE_SETS_KEPT) this.byScopes.delete(this.byScopes.keys().next().value!);
    }
    this.byScopes.set(key, pages);
    return pages;
  }

  private build(scopes: ReadonlySet<string>): ToolPage[] {
    const pages: Array<{ tools: Tool[]; bytes: number }> = [];
    let page: { tools: Tool[]; bytes: number } = { tools: [], bytes: 0 };
    for (const tool of this.catalog.tools.values()) {
      if (!keyMayCall(tool, scopes)) continue;
      const size = this.sizes.get(tool.name)! + 1; // and its comma
      if (page.tools.length > 0 && page.bytes + size > TOOLS_PAGE_BYTES) {
        pages.push(page);
        page = { tools: [], bytes: 0 };
      }
      page.tools.push(tool.definition);
      page.bytes += size;
    }
    if (page.tools.length > 0 || pages.length === 0) pages.push(page);
    return pages.map(({ tools, bytes }, i) => {
      const nextCursor = i + 1 < pages.length ? `${this.version}.${i + 1}` : undefined;
      return { result: { tools, ...(nextCursor ? { nextCursor } : {}) }, bytes: bytes + 64 };
    });
  }
}
