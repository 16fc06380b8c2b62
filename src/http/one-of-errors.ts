// A body that fails a `oneOf` whose branches are told apart by a `type` property (message content, bot nodes …)
// makes Ajv report every branch's complaints — six contradictory details for one mistake. When the value's
// `type` names a branch, only that branch's errors are reported; an unknown `type` becomes one clear error.
// Its validators collect all errors, which costs time quadratic in the value: it is only ever given the bounded
// copy of a refused request (src/http/bounded-validation.ts, describeFailure), never the request itself.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { useLinearUniqueItems } from './bounded-validation.ts';

type Json = Record<string, any>;

export function createOneOfNarrower(doc: Json) {
  // Made on the first refused request that needs a branch compiled, not at start: adding the whole document to an
  // Ajv instance was ~80 ms of CPU before the first /health (issue 38, bench part a).
  let ajv: Ajv | undefined;
  const docAjv = (): Ajv => {
    if (!ajv) {
      ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      ajv.addFormat('binary', true);
      useLinearUniqueItems(ajv);
      ajv.addSchema(doc, 'doc');
    }
    return ajv;
  };
  const compiled = new Map<string, ValidateFunction>();

  const deref = (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let i = 0; n?.$ref && i < 20; i++)
      n = String(n.$ref)
        .slice(2)
        .split('/')
        .reduce((a: Json | undefined, p) => a?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return n;
  };

  /** The schema that applies at `path` inside `schema` (properties, items, allOf), or undefined. */
  const schemaAt = (schema: Json | undefined, path: string[]): Json | undefined => {
    let s = deref(schema);
    for (const seg of path) {
      if (!s) return undefined;
      const viaAllOf = (s.allOf as Json[] | undefined)?.map(deref).find((x) => x?.properties?.[seg]);
      s = deref(s.properties?.[seg] ?? viaAllOf?.properties?.[seg] ?? (/^\d+$/.test(seg) ? s.items : undefined));
    }
    return s;
  };

  const typesOf = (branch: Json | undefined): string[] => {
    const t = deref(branch?.properties?.type);
    return t?.const !== undefined ? [String(t.const)] : Array.isArray(t?.enum) ? t.enum.map(String) : [];
  };

  return function narrow(errors: ErrorObject[], body: unknown, bodySchema: Json | undefined): ErrorObject[] {
    let out = errors;
    for (const e of errors) {
      if (e.keyword !== 'oneOf' || !e.instancePath.startsWith('/requestBody')) continue;
      const path = e.instancePath
        .split('/')
        .slice(2)
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
      const value = path.reduce<any>((v, p) => (v && typeof v === 'object' ? v[p] : undefined), body);
      const branches = (schemaAt(bodySchema, path)?.oneOf as Json[] | undefined) ?? [];
      if (!value || typeof value !== 'object' || typeof value.type !== 'string' || branches.length === 0) continue;
      const under = (x: ErrorObject) => x.instancePath === e.instancePath || x.instancePath.startsWith(`${e.instancePath}/`);
      const branch = branches.find((b) => typesOf(deref(b)).includes(value.type));
      let replacement: ErrorObject[];
      if (!branch) {
        const allowed = branches.flatMap((b) => typesOf(deref(b)));
        if (allowed.length === 0) continue;
        replacement = [
          {
            instancePath: `${e.instancePath}/type`,
            schemaPath: e.schemaPath,
            keyword: 'enum',
            params: { allowedValues: allowed },
            message: 'must be one of the types',
          },
        ];
      } else {
        const key = branch.$ref ?? JSON.stringify(branch);
        let validate = compiled.get(key);
        if (!validate) compiled.set(key, (validate = docAjv().compile(branch.$ref ? { $ref: `doc${branch.$ref}` } : branch)));
        if (validate(value)) continue;
        replacement = (validate.errors ?? []).map((x) => ({ ...x, instancePath: `${e.instancePath}${x.instancePath}` }));
      }
      out = [...out.filter((x) => !under(x) && x !== e), ...replacement];
    }
    return out;
  };
}
