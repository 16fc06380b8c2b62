// A matcher compiled once at start. openapi-backend's own router rebuilds the operation list and a RegExp
// per operation on every request (cost grows with the number of operations); this one walks a segment
// tree, so matching cost depends on the path's depth only. Static segments win over templates.
import type { Operation } from 'openapi-backend';

type Node = {
  static: Map<string, Node>;
  param: Node | undefined;
  methods: Map<string, Operation>;
};

const newNode = (): Node => ({ static: new Map(), param: undefined, methods: new Map() });

export type MatchResult = { kind: 'found'; operation: Operation } | { kind: 'methodNotAllowed'; allow: string[] } | { kind: 'notFound' };

export class CompiledRouter {
  private readonly root = newNode();

  constructor(operations: Operation[]) {
    for (const op of operations) {
      let node = this.root;
      for (const seg of split(op.path)) {
        if (seg.startsWith('{') && seg.endsWith('}')) node = node.param ??= newNode();
        else {
          let next = node.static.get(seg);
          if (!next) node.static.set(seg, (next = newNode()));
          node = next;
        }
      }
      node.methods.set(op.method.toLowerCase(), op);
    }
  }

  match(method: string, path: string): MatchResult {
    const node = find(this.root, split(path), 0);
    if (!node) return { kind: 'notFound' };
    const op = node.methods.get(method.toLowerCase());
    if (op) return { kind: 'found', operation: op };
    return { kind: 'methodNotAllowed', allow: [...node.methods.keys()].map((m) => m.toUpperCase()).sort() };
  }
}

function split(path: string): string[] {
  const q = path.indexOf('?');
  const clean = q === -1 ? path : path.slice(0, q);
  return clean.split('/').filter((s) => s.length > 0);
}

// Depth-first with static-before-param preference and backtracking, so `/a/static/x` still reaches
// `/a/{id}/x` when the static branch dead-ends.
function find(node: Node, segs: string[], i: number): Node | undefined {
  if (i === segs.length) return node.methods.size > 0 ? node : undefined;
  const seg = segs[i]!;
  const s = node.static.get(seg);
  if (s) {
    const hit = find(s, segs, i + 1);
    if (hit) return hit;
  }
  if (node.param && seg.length > 0) return find(node.param, segs, i + 1);
  return undefined;
}
