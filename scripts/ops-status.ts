// Lists which documented operations are built and which answer 501 NOT_IMPLEMENTED, per section.
import { loadDocument, listOperations } from '../src/contract/document.ts';
import { loadAllHandlers } from '../src/handlers/index.ts';
import { notImplementedOperations } from '../src/handlers/not-implemented.ts';

const handlers = await loadAllHandlers();

const doc = loadDocument();
const pending = new Set(notImplementedOperations);
const bySection = new Map<string, { built: string[]; pending: string[] }>();
for (const op of listOperations(doc)) {
  const tag = ((doc.paths[op.path]![op.method] as { tags?: string[] }).tags ?? ['?'])[0]!;
  const entry = bySection.get(tag) ?? { built: [], pending: [] };
  (pending.has(op.operationId) ? entry.pending : entry.built).push(op.operationId);
  bySection.set(tag, entry);
}
let built = 0;
let total = 0;
for (const [section, { built: b, pending: p }] of [...bySection].sort()) {
  built += b.length;
  total += b.length + p.length;
  console.log(`${section}: ${b.length}/${b.length + p.length} built`);
  if (p.length) console.log(`  501 NOT_IMPLEMENTED: ${p.join(', ')}`);
}
console.log(
  `\n${built}/${total} operations built; ${total - built} answer 501 NOT_IMPLEMENTED (${Object.keys(handlers).length} handlers registered)`,
);
