// openapi-backend as src/http/api.ts uses it, in a module of its own: api.ts imports it on the first request that
// validates (issue 38, bench part a: openapi-backend, its lodash, json-schema-ref-parser and OpenAPI schema
// validator, ~60 ms of CPU, are not loaded before the first /health; nor is Ajv, by the oneOf narrower).
// Written against openapi-backend 5.21.2, whose internals it leans on: it overrides `loadDocument` (quick init's
// unused parse), inits it on the document without paths and replaces `router.getOperations` and
// `router.getOperation` on the instance with the operations of src/http/operations.ts (the library's flattening
// and dereference, each operation's body and responses dereferenced on first read), wraps
// `validator.getRequestValidatorsForOperation` (bounded errors), builds a second `OpenAPIValidator` on the same router, and calls `router.parseRequest` and the request
// validators directly (validated()). test/library-internals.test.ts names each assumption and fails on an upgrade
// that breaks one; test/http-validation.test.ts compares validated() with the library's own steps.
import { OpenAPIBackend, OpenAPIValidator, type Document, type Operation } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { Ajv, Options as AjvOptions } from 'ajv';
import type { OperationHeadsFile } from './operations.ts';
import { describeFailure, useLinearUniqueItems, type Narrow, type Validate } from './bounded-validation.ts';
import { createOneOfNarrower } from './one-of-errors.ts';

// validateSchema off: openapi-backend makes an Ajv instance per operation (at its first request), and each one
// compiled the draft-07 meta-schema to check the operation's schemas before compiling them — most of that first
// request's time (/health's included: issue 38, bench part a). The document's schemas are checked once, by
// `npm run spec:lint`, not at run time.
const AJV_OPTIONS: AjvOptions = { strict: false, useDefaults: true, validateSchema: false };

function customizeAjv(ajv: Ajv): Ajv {
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  return useLinearUniqueItems(ajv);
}

/**
 * openapi-backend as the API configures it (its validators coerce and fill defaults); not yet initialised. Its
 * validators stop at the first error (linear in the request: src/http/bounded-validation.ts); `allErrors` is for
 * comparisons (test/http-validation.test.ts).
 */
export function openApiBackendFor(document: unknown, { allErrors = false } = {}): OpenAPIBackend {
  return new QuickOpenApiBackend({
    // A new top-level object, so each backend gets its own copy: quick init's dereferenceSync clones its input
    // deeply and caches by the input's identity (a structuredClone here was a second full copy, ~20 ms at start).
    definition: { ...(document as Document) },
    strict: true,
    quick: true, // openapi-backend's full init rejects valid 3.1; `npm run spec:lint` validates the document
    validate: true,
    coerceTypes: true,
    ajvOpts: { ...AJV_OPTIONS, allErrors },
    customizeAjv,
  });
}

/**
 * init() in quick mode still parses the document with json-schema-ref-parser (loadDocument) and never reads the
 * result: it is only validated when not quick, and the definition is dereferenced from the input. That parse was
 * ~30 ms of CPU before the first /health (issue 38, bench part a); here the input stands for it.
 */
class QuickOpenApiBackend extends OpenAPIBackend {
  override async loadDocument(): Promise<Document> {
    this.document = this.inputDocument as Document;
    return this.document;
  }
}

/**
 * The API's backend: initialised on the document without paths, its router handing out `operations` (the
 * router and the validators read operations only through getOperations/getOperation:
 * test/library-internals.test.ts), its request validators bounded (describeFailuresBounded).
 */
export async function apiBackend(
  heads: Pick<OperationHeadsFile, 'openapi' | 'info'>,
  operations: Operation[],
  document: () => Record<string, unknown>,
): Promise<OpenAPIBackend> {
  const backend = openApiBackendFor({ openapi: heads.openapi, info: heads.info, paths: {} });
  await backend.init();
  // openapi-backend recomputes these on every call; compute once.
  const byId = new Map(operations.map((op) => [op.operationId!, op]));
  backend.router.getOperations = () => operations;
  backend.router.getOperation = (id: string) => byId.get(id);
  // The oneOf narrower (and its Ajv instance) is made on the first refused body.
  let narrower: ReturnType<typeof createOneOfNarrower> | undefined;
  describeFailuresBounded(backend, (id) => {
    const content = (byId.get(id)?.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content;
    const schema = content?.['application/json']?.schema;
    return (errors, body) => (narrower ??= createOneOfNarrower(document()))(errors, body, schema);
  });
  return backend;
}

/**
 * The request validators of `backend` stop at the first error; wrapped here, a refused request is described by
 * the same schemas with all errors on a bounded copy of it (describeFailure): linear in the request, and a few
 * thousand errors at most, so openapi-backend's `push(...errors)` cannot overflow the stack either. The
 * all-errors validators are compiled the first time an operation refuses a request.
 */
function describeFailuresBounded(backend: OpenAPIBackend, narrowFor: (operationId: string) => Narrow): void {
  const validator = backend.validator as unknown as { getRequestValidatorsForOperation(id: string): Validate[] | undefined };
  // Made on the first refused request: its Ajv instance (meta-schemas compiled) is start-up time /health need not wait for.
  let detailed: typeof validator | undefined;
  const detailedValidator = () =>
    (detailed ??= new OpenAPIValidator({
      definition: backend.definition,
      ajvOpts: { ...AJV_OPTIONS, allErrors: true },
      customizeAjv,
      router: backend.router,
      lazyCompileValidators: true,
      coerceTypes: true,
    }) as unknown as typeof validator);
  const original = validator.getRequestValidatorsForOperation.bind(validator);
  const wrappedById = new Map<string, Validate[]>();
  validator.getRequestValidatorsForOperation = (id: string) => {
    let wrapped = wrappedById.get(id);
    if (!wrapped) {
      const narrow = narrowFor(id);
      wrapped = (original(id) ?? []).map((validate, index) => {
        const bounded: Validate = (data: unknown) => {
          if (validate(data)) {
            bounded.errors = null;
            return true;
          }
          const all = detailedValidator().getRequestValidatorsForOperation(id)![index]!;
          bounded.errors = describeFailure(data, validate.errors ?? [], all, narrow);
          return false;
        };
        return bounded;
      });
      wrappedById.set(id, wrapped);
    }
    return wrapped;
  };
}
