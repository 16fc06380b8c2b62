// One MCP tool per operation of the document, generated: the name is the operationId, the description the
// operation's summary and description, the input schema its path and query parameters plus `body` (the very
// JSON Schemas the router validates with) and its header parameters in camelCase (`idempotencyKey`), the output schema
// its JSON success answer. A change to openapi.yaml changes the tools with it; an operation that cannot become
// a tool stops the build here (start-up) rather than giving a broken tool.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { listOperationObjects, listOperations, resolveRef, type OpenApiDocument, type OperationObject } from '../contract/document.ts';
import { SIGNED_URL_PARAMS } from '../lib/signed-urls.ts';
import { withDefinitions, type JsonSchema } from './json-schema.ts';
import { uploadBodySchema } from './uploads.ts';

/** The argument carrying the request body. */
export const BODY_ARGUMENT = 'body';
/** A header parameter's argument: its name in camelCase (`Idempotency-Key` → `idempotencyKey`). */
const headerArgument = (header: string) => header.toLowerCase().replace(/-+([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
/** How long the signed link a download tool answers stays valid (as an analytics export's `downloadUrl`). */
export const DOWNLOAD_LINK_TTL_MS = 60 * 60 * 1000;

export type CatalogTool = {
  name: string;
  method: string;
  /** The path template (`/v1/contacts/{id}`). */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Header parameters: the argument and the (lower-case) header it fills. */
  headerParams: Array<{ argument: string; header: string }>;
  /** The request body, when the operation takes one: JSON, or multipart with its file parts (given as base64). */
  body: { required: boolean; mediaType: string; fileFields?: string[] } | undefined;
  scopes: string[][];
  /** A download (signed-link operation): the tool answers a resource link instead of the bytes. */
  download: boolean;
  /** The operation's own body limit (`x-max-request-bytes`), when it has one. */
  maxBodyBytes: number | undefined;
  definition: Tool;
};

/** Operations deliberately not offered as tools, with the reason a call to one of them answers. */
type RefusedOperation = { name: string; scopes: string[][]; reason: string };

export type ToolCatalog = { tools: Map<string, CatalogTool>; refused: Map<string, RefusedOperation> };

type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema; deprecated?: boolean };
type MediaTypes = Record<string, { schema?: JsonSchema }>;

const MULTIPART = 'multipart/form-data';
const isJson = (mediaType: string) => mediaType === 'application/json' || /^application\/[^;]+\+json$/.test(mediaType);

export function buildToolCatalog(doc: OpenApiDocument): ToolCatalog {
  const security = new Map(listOperations(doc).map((o) => [o.operationId, o]));
  const tools = new Map<string, CatalogTool>();
  const refused = new Map<string, RefusedOperation>();
  const problems: string[] = [];
  for (const { method, path, operation } of listOperationObjects(doc)) {
    const info = security.get(operation.operationId)!;
    try {
      const requestBody = resolveRef<{ required?: boolean; content?: MediaTypes } | undefined>(doc, operation.requestBody);
      const mediaTypes = Object.keys(requestBody?.content ?? {});
      if (mediaTypes.length > 0 && !mediaTypes.some((m) => isJson(m) || m === MULTIPART)) {
        // A raw body (a bare file, CSV text …): tool arguments are JSON, so the operation stays HTTP-only, said clearly.
        refused.set(operation.operationId, {
          name: operation.operationId,
          scopes: info.scopes,
          reason: `${operation.operationId} takes a ${mediaTypes.join(' or ')} body, which MCP tool arguments cannot carry; call it over HTTP: ${method.toUpperCase()} ${path}.`,
        });
        continue;
      }
      tools.set(operation.operationId, buildTool(doc, method, path, operation, info.scopes, info.signedUrl, requestBody));
    } catch (error) {
      problems.push(`${operation.operationId}: ${(error as Error).message}`);
    }
  }
  if (problems.length)
    throw new Error(`operations that cannot become MCP tools (src/mcp-server/tool-catalog.ts):\n  ${problems.join('\n  ')}`);
  return { tools, refused };
}

function buildTool(
  doc: OpenApiDocument,
  method: string,
  path: string,
  operation: OperationObject,
  scopes: string[][],
  download: boolean,
  requestBody: { required?: boolean; content?: MediaTypes } | undefined,
): CatalogTool {
  // Operation-level parameters override path-level ones of the same name and location.
  const parameters = new Map<string, Parameter>();
  for (const p of operation.parameters ?? []) {
    const param = resolveRef<Parameter>(doc, p);
    parameters.set(`${param.in}:${param.name}`, param);
  }
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  const headerParams: Array<{ argument: string; header: string }> = [];
  const add = (name: string, schema: JsonSchema, isRequired: boolean) => {
    if (name in properties) throw new Error(`two arguments would be named "${name}"`);
    properties[name] = schema;
    if (isRequired) required.push(name);
  };
  const described = (p: Parameter): JsonSchema => ({
    ...(p.schema ?? {}),
    ...(p.description ? { description: p.description } : {}),
    ...(p.deprecated ? { deprecated: true } : {}),
  });
  for (const p of parameters.values()) {
    if (p.in === 'path') {
      add(p.name, described(p), true);
      pathParams.push(p.name);
    } else if (p.in === 'query') {
      // A signed link's own parameters: a tool call authenticates with the key, and answers the link itself.
      if (download && (SIGNED_URL_PARAMS as readonly string[]).includes(p.name)) continue;
      add(p.name, described(p), Boolean(p.required));
      queryParams.push(p.name);
    } else if (p.in === 'header') {
      // Conditional headers (If-None-Match) mean nothing to a download answered by a link.
      if (download) continue;
      const argument = headerArgument(p.name);
      add(
        argument,
        { ...described(p), description: `The ${p.name} header${p.description ? `: ${p.description}` : '.'}` },
        Boolean(p.required),
      );
      headerParams.push({ argument, header: p.name.toLowerCase() });
    } else {
      throw new Error(`${p.in} parameter "${p.name}" has no tool argument`);
    }
  }
  const content = requestBody?.content ?? {};
  const jsonMediaType = Object.keys(content).find(isJson);
  const jsonBody = jsonMediaType ? content[jsonMediaType] : undefined;
  const upload =
    !jsonBody && content[MULTIPART] ? uploadBodySchema(resolveRef<JsonSchema>(doc, content[MULTIPART].schema ?? {})) : undefined;
  const bodyRequired = Boolean(requestBody?.required);
  if (jsonBody) add(BODY_ARGUMENT, { ...(jsonBody.schema ?? {}), description: 'The request body (JSON).' }, bodyRequired);
  if (upload)
    add(
      BODY_ARGUMENT,
      {
        ...upload.schema,
        description: `The form's fields; the file parts (${upload.fileFields.join(', ')}) as {filename, mimeType, contentBase64}.`,
      },
      bodyRequired,
    );

  const input = withDefinitions(doc, properties, 'input');
  // One example of a whole request body, the document's first: the input schemas keep no other (json-schema.ts).
  const bodyExample = jsonBody?.schema ? firstExample(doc, jsonBody.schema) : undefined;
  if (bodyExample !== undefined) input.value[BODY_ARGUMENT] = { ...input.value[BODY_ARGUMENT], examples: [bodyExample] };
  const inputSchema = {
    type: 'object' as const,
    properties: input.value,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(input.$defs).length ? { $defs: input.$defs } : {}),
  };
  const outputSchema = download ? undefined : successSchema(doc, operation);
  const nonJsonAnswer = !download && successMediaTypes(doc, operation).some((m) => !isJson(m));

  // What the schema and the operation's description do not already say (the idempotencyKey argument describes itself).
  const notes = [
    `HTTP: ${method.toUpperCase()} ${path}.`,
    scopes.length ? `Requires scope: ${scopes.map((r) => r.join(' + ')).join(' or ')}.` : 'Needs no scope.',
    download
      ? `Answers a resource link: a signed URL that downloads the file without a key for ${DOWNLOAD_LINK_TTL_MS / 60_000} minutes.`
      : '',
    upload
      ? `Files are given base64 in the arguments, so over MCP an upload is bounded by the message limit (BODY_LIMIT_BYTES + 64 KiB); larger files over HTTP.`
      : '',
    nonJsonAnswer
      ? 'Tools answer JSON only: asking for another format (such as CSV) answers NOT_ACCEPTABLE; download it over HTTP instead.'
      : '',
  ].filter(Boolean);
  const summary = operation.summary ?? operation.operationId;
  const description = [operation.deprecated ? `Deprecated: ${summary}.` : summary, operation.description ?? '', notes.join(' ')]
    .filter(Boolean)
    .join('\n\n');

  const definition: Tool = {
    name: operation.operationId,
    title: operation.deprecated ? `${summary} (deprecated)` : summary,
    description,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    // No annotations.title: clients show `title` first, and it would be a second copy of it.
    annotations: {
      readOnlyHint: method === 'get',
      idempotentHint: method === 'get' || method === 'put' || method === 'delete',
    },
    _meta: { httpMethod: method.toUpperCase(), httpPath: path, ...(operation.deprecated ? { deprecated: true } : {}) },
  };
  const maxBodyBytes = operation['x-max-request-bytes'];
  return {
    name: operation.operationId,
    method,
    path,
    pathParams,
    queryParams,
    headerParams,
    body: jsonMediaType
      ? { required: bodyRequired, mediaType: jsonMediaType }
      : upload
        ? { required: bodyRequired, mediaType: MULTIPART, fileFields: upload.fileFields }
        : undefined,
    scopes,
    download,
    maxBodyBytes: typeof maxBodyBytes === 'number' ? maxBodyBytes : undefined,
    definition,
  };
}

type Response = { content?: MediaTypes };

function successResponses(doc: OpenApiDocument, operation: OperationObject): Response[] {
  return Object.entries(operation.responses ?? {})
    .filter(([status]) => /^2/.test(status))
    .map(([, r]) => resolveRef<Response>(doc, r));
}

function successMediaTypes(doc: OpenApiDocument, operation: OperationObject): string[] {
  return successResponses(doc, operation).flatMap((r) => Object.keys(r.content ?? {}));
}

/**
 * The JSON success answer as an MCP output schema (which must describe an object), or none when some success
 * has no JSON body (a 204) or the body is not an object: structured content is then not promised.
 */
function successSchema(doc: OpenApiDocument, operation: OperationObject): Tool['outputSchema'] {
  const schemas: JsonSchema[] = [];
  for (const response of successResponses(doc, operation)) {
    const json = Object.entries(response.content ?? {}).find(([mediaType]) => isJson(mediaType))?.[1];
    if (!json?.schema) return undefined;
    if (!describesObject(doc, json.schema)) return undefined;
    if (!schemas.some((s) => JSON.stringify(s) === JSON.stringify(json.schema))) schemas.push(json.schema);
  }
  if (schemas.length === 0) return undefined;
  const output = withDefinitions(doc, schemas, 'output');
  return {
    type: 'object',
    ...(output.value.length === 1 ? { allOf: output.value } : { anyOf: output.value }),
    ...(Object.keys(output.$defs).length ? { $defs: output.$defs } : {}),
  };
}

/** The first example of a schema (following its `$ref`), if it has one. */
function firstExample(doc: OpenApiDocument, schema: unknown): unknown {
  const examples = resolveRef<JsonSchema>(doc, schema).examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** `type: object`, or an `allOf` one of whose parts is (BlastDetail = Blast + more). */
function describesObject(doc: OpenApiDocument, schema: unknown): boolean {
  const s = resolveRef<JsonSchema>(doc, schema);
  if (s.type !== undefined) return s.type === 'object';
  return Array.isArray(s.allOf) && s.allOf.some((part) => describesObject(doc, part));
}
