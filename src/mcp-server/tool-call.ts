// A tool call is an API request: the arguments become the path, query, headers and body of the operation, and
// the request goes through the API's own pipeline (src/http/api.ts: key and scopes, validation, tenancy,
// idempotency, handler, response check). Its answer becomes the tool result; its ErrorResponse a tool error
// carrying the same code, message and details as over HTTP.
import { currentStatementScope, runInStatementScope, StatementScope } from '../db/statement-scope.ts';
import { statementTimeoutError } from '../http/request-scope.ts';
import type { PublicClient } from '../domain/acquisition/client.ts';
import { Readable } from 'node:stream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Operation } from 'openapi-backend';
import type { Api, ApiResponse } from '../http/api.ts';
import type { Config } from '../config.ts';
import type { RequestScope } from '../http/handler-types.ts';
import { ApiError, MAX_FIELD_ERRORS, type ErrorResponse, type FieldError } from '../domain/errors.ts';
import { assertStorableValue } from '../http/request-guards.ts';
import { isDatabaseUnavailable } from '../startup-errors.ts';
import { signUrl } from '../lib/signed-urls.ts';
import { BODY_ARGUMENT, DOWNLOAD_LINK_TTL_MS, type CatalogTool } from './tool-catalog.ts';
import { toUploadedFiles } from './uploads.ts';
import type { UploadedFile } from '../domain/files.ts';

export type ToolCallContext = {
  api: Api;
  config: Pick<Config, 'bodyLimitBytes' | 'assetBaseUrl'>;
  operation: Operation;
  /** The Authorization header of the MCP request: every call authenticates again, so a revoked key stops at once. */
  authorization: string | undefined;
  /** The /mcp request's client (address as TRUST_PROXY says, user agent): the public operations' rate limits count it. */
  client: PublicClient;
  requestId: string;
  log: RequestScope['log'];
};

export async function callTool(tool: CatalogTool, args: Record<string, unknown>, ctx: ToolCallContext): Promise<CallToolResult> {
  try {
    // As over HTTP: key and scopes (401/403) before anything of the request is looked at.
    const authorization = ctx.authorization === undefined ? {} : { authorization: ctx.authorization };
    const principal = await ctx.api.authorize(ctx.operation, {
      method: tool.method.toUpperCase(),
      path: tool.path,
      headers: authorization,
      query: {},
    });
    const request = toRequest(tool, args, ctx.config);
    Object.assign(request.headers, authorization);
    // Each call is its own request to the database's limits: the operation's documented statement timeout
    // (`x-statement-timeout-seconds`) or the /mcp request's, cancelled with it when the client goes.
    const parent = currentStatementScope();
    const seconds = (ctx.operation as { 'x-statement-timeout-seconds'?: number })['x-statement-timeout-seconds'];
    const scope = new StatementScope(typeof seconds === 'number' ? seconds * 1000 : (parent?.timeoutMs ?? 0), parent?.signal);
    const result = await runInStatementScope(scope, async () => {
      try {
        return await ctx.api.handle({
          ...request,
          requestId: ctx.requestId,
          log: ctx.log,
          operation: ctx.operation,
          principal,
          client: ctx.client,
        });
      } catch (error) {
        throw statementTimeoutError(error) ?? error; // 504 QUERY_TIMEOUT, as over HTTP
      }
    });
    return toToolResult(tool, result, request.path, principal?.organizationId, ctx.config.assetBaseUrl);
  } catch (error) {
    return toolError(toApiError(error, ctx.log), ctx.requestId);
  }
}

type ToolRequest = {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: unknown;
  files: UploadedFile[];
};

/** Arguments → the HTTP request they stand for; a shape no request could have answers 400 as validation would. */
function toRequest(tool: CatalogTool, args: Record<string, unknown>, config: Pick<Config, 'bodyLimitBytes'>): ToolRequest {
  const problems: FieldError[] = [];
  const known = new Set([
    ...tool.pathParams,
    ...tool.queryParams,
    ...tool.headerParams.map((h) => h.argument),
    ...(tool.body ? [BODY_ARGUMENT] : []),
  ]);
  for (const name of Object.keys(args))
    if (!known.has(name)) problems.push({ field: name, message: 'is not a known field', code: 'additionalProperties' });

  let path = tool.path;
  for (const name of tool.pathParams) {
    const value = args[name];
    if (!isScalar(value)) {
      problems.push({
        field: `path.${name}`,
        message: value === undefined || value === null ? 'is required' : 'must be a string',
        code: value === undefined || value === null ? 'required' : 'type',
      });
      continue;
    }
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const query: Record<string, string | string[]> = {};
  for (const name of tool.queryParams) {
    const value = args[name];
    if (value === undefined || value === null) continue; // absent, as an omitted query parameter
    if (isScalar(value)) query[name] = String(value);
    else if (Array.isArray(value) && value.every(isScalar)) query[name] = value.map(String);
    else problems.push({ field: `query.${name}`, message: 'must be a string, number, boolean or an array of them', code: 'type' });
  }
  const headers: Record<string, string> = {};
  for (const { argument, header } of tool.headerParams) {
    const value = args[argument];
    if (value === undefined || value === null) continue;
    if (isScalar(value)) headers[header] = String(value);
    else problems.push({ field: `header.${header}`, message: 'must be a string', code: 'type' });
  }
  if (problems.length)
    throw new ApiError(400, 'VALIDATION_ERROR', 'Request validation failed.', { details: problems.slice(0, MAX_FIELD_ERRORS) });

  let body = tool.body ? args[BODY_ARGUMENT] : undefined;
  let files: UploadedFile[] = [];
  if (tool.body && body !== undefined) {
    // The checks the HTTP body reader makes (src/http/body.ts): the operation's size limit, storable values.
    const limit = tool.maxBodyBytes ?? config.bodyLimitBytes;
    assertStorableValue(body);
    if (tool.body.fileFields) {
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new ApiError(400, 'VALIDATION_ERROR', 'Request validation failed.', {
          details: [{ field: 'body', message: 'must be object', code: 'type' }],
        });
      ({ body, files } = toUploadedFiles(body as Record<string, unknown>, tool.body.fileFields, limit));
    } else if (Buffer.byteLength(JSON.stringify(body)) > limit) {
      throw new ApiError(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes.`);
    }
    headers['content-type'] = tool.body.mediaType;
  }
  return { method: tool.method.toUpperCase(), path, query, headers, body, files };
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function toToolResult(
  tool: CatalogTool,
  result: ApiResponse,
  path: string,
  organizationId: string | undefined,
  baseUrl: string,
): CallToolResult {
  const json = (result.contentType ?? 'application/json') === 'application/json' && !(result.body instanceof Readable);
  if (!json) {
    if (result.body instanceof Readable) result.body.destroy(); // the caller gets a link, not the bytes
    if (!tool.download || !organizationId) {
      throw new ApiError(
        406,
        'NOT_ACCEPTABLE',
        `Tools answer JSON only; this request asked for ${result.contentType ?? 'a file'}. Ask for JSON, or download it over HTTP (${tool.method.toUpperCase()} ${tool.path}).`,
      );
    }
    const expiresAt = new Date(Date.now() + DOWNLOAD_LINK_TTL_MS);
    const uri = signUrl(baseUrl, path, organizationId, expiresAt, { method: tool.method });
    return {
      content: [
        {
          type: 'resource_link',
          uri,
          name: path.split('/').filter(Boolean).slice(-2).join('-'),
          description: `Download link (no key needed) valid until ${expiresAt.toISOString()}.`,
          ...(result.contentType ? { mimeType: result.contentType } : {}),
        },
      ],
      _meta: { status: result.status, expiresAt: expiresAt.toISOString() },
    };
  }
  const meta = { status: result.status, ...(result.headers?.['Idempotent-Replayed'] ? { idempotentReplayed: true } : {}) };
  if (result.body === undefined) return { content: [{ type: 'text', text: `Done (HTTP ${result.status}, no content).` }], _meta: meta };
  const isObject = typeof result.body === 'object' && result.body !== null && !Array.isArray(result.body);
  return {
    content: [{ type: 'text', text: JSON.stringify(result.body) }],
    ...(isObject && tool.definition.outputSchema ? { structuredContent: result.body as Record<string, unknown> } : {}),
    _meta: meta,
  };
}

/** As the HTTP error handler (src/app.ts) decides: ApiError as is, a lost database 503, anything else 500. */
function toApiError(error: unknown, log: RequestScope['log']): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return new ApiError(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly.');
  log.error({ err: error }, 'tool call failed');
  return new ApiError(500, 'INTERNAL_ERROR', 'Internal server error.');
}

/** A tool error: the ErrorResponse as text (structured content is reserved for the output schema's shape). */
function toolError(error: ApiError, requestId: string): CallToolResult {
  const body: ErrorResponse = error.toBody(requestId);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], _meta: { status: error.status, error: body } };
}
