// POST /mcp's handler (mounted by mount.ts on the first MCP message). Each message is authenticated with the same
// API key as the API, from the headers, before any byte of the body is read; the body is then parsed as the API
// parses JSON, within BODY_LIMIT_BYTES plus the envelope. Stateless (no Mcp-Session-Id, as the SDK's stateless mode): every message
// carries its key, so any API process can answer any message and a revoked key stops at its next message.
// Each message counts once against the key's request rate limit (src/http/rate-limit.ts), as an HTTP request
// does; a batch is bounded (batches.ts) and tools/list answers pages built once per scope set (tool-pages.ts).
import { clientOf } from '../http/client.ts';
import type { PublicClient } from '../domain/acquisition/client.ts';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Operation } from 'openapi-backend';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../app-context.ts';
import type { Api } from '../http/api.ts';
import type { Principal } from '../auth/principal.ts';
import { authenticate } from '../auth/authenticate.ts';
import { hasBody, toBodyError } from '../http/body.ts';
import { sendContinue } from '../http/http-server.ts';
import { ApiError } from '../domain/errors.ts';
import type { KeyRateLimiter } from '../http/rate-limit.ts';
import { buildToolCatalog, type ToolCatalog } from './tool-catalog.ts';
import { callTool } from './tool-call.ts';
import { InvalidCursorError, ToolPages } from './tool-pages.ts';
import { checkBatch, runOneAtATime, type AnswerSizes } from './batches.ts';

/** Room for the JSON-RPC envelope around a request body of BODY_LIMIT_BYTES (the body itself is checked per tool). */
const MCP_ENVELOPE_BYTES = 64 * 1024;

const INSTRUCTIONS =
  'Every tool is one operation of the Messaging Service API, named by its operationId, with the same validation, ' +
  'scopes and tenancy as over HTTP. Arguments: the path and query parameters by name, the request body as `body`, ' +
  "and `idempotencyKey` where the operation takes an Idempotency-Key. Errors carry the API's ErrorResponse " +
  '(`code`, `message`, `details`).';

/** POST /mcp, built on the first MCP message (mount.ts): the SDK and the tool catalogue are not needed before. */
export function createMcpHandler(app: AppContext, api: Api, rateLimit: KeyRateLimiter): RequestHandler {
  const catalog = buildToolCatalog(app.document);
  const pages = new ToolPages(catalog);
  const operations = new Map(api.operations.map((op) => [op.operationId!, op]));
  for (const name of catalog.tools.keys()) if (!operations.has(name)) throw new Error(`MCP tool ${name} has no operation in the API`);
  // The message is parsed as the API parses JSON (limit → 413, malformed → 400); the values checks (NUL, depth) and
  // the operation's own limit apply to the `body` argument, so their `details` name the same fields as over HTTP.
  const parseJson = express.json({ limit: app.config.bodyLimitBytes + MCP_ENVELOPE_BYTES, type: ['application/json'] });
  const readMessage = async (req: Request, res: Response): Promise<unknown> => {
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== 'application/json') {
      throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.', {
        details: [{ field: 'header.content-type', message: `unsupported media type "${mediaType || '(none)'}"` }],
      });
    }
    if (!hasBody(req))
      throw new ApiError(400, 'VALIDATION_ERROR', 'The request body must be an MCP (JSON-RPC) message.', {
        details: [{ field: 'body', message: 'is required', code: 'required' }],
      });
    await new Promise<void>((resolve, reject) => parseJson(req, res, (err?: unknown) => (err ? reject(toBodyError(err)) : resolve())));
    return req.body as unknown;
  };

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const header = req.headers.authorization;
      const principal = await authenticate(app.db, app.apiKeyCache, header);
      res.set(await rateLimit.take(principal)); // the message's first request, before its body is read
      sendContinue(req, res); // key, scope and rate accepted: the client may send the body now
      const body = await readMessage(req, res);
      const batch = Array.isArray(body) && body.length > 1 ? checkBatch(body) : 1;
      if (batch > 1) res.set(await rateLimit.take(principal, batch - 1)); // every message of a batch counts
      const requestId = String(req.id);
      const sizes: AnswerSizes | undefined = batch > 1 ? new Map() : undefined;
      const mcp = createMcpServer(app, api, catalog, pages, operations, principal, {
        authorization: header,
        client: clientOf(req),
        requestId,
        log: req.log,
        sizes,
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        mcp.close().catch((err: unknown) => req.log.warn({ err }, 'closing the MCP transport failed')); // closes the transport too
      });
      await mcp.connect(transport);
      if (sizes) runOneAtATime(transport, requestId, sizes);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      next(error);
    }
  };
}

function createMcpServer(
  app: AppContext,
  api: Api,
  catalog: ToolCatalog,
  pages: ToolPages,
  operations: Map<string, Operation>,
  principal: Principal,
  request: {
    authorization: string | undefined;
    client: PublicClient;
    requestId: string;
    log: Request['log'];
    sizes: AnswerSizes | undefined;
  },
): Server {
  const mcp = new Server(
    { name: 'messaging-service', title: app.document.info.title, version: app.document.info.version },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );

  mcp.setRequestHandler(ListToolsRequestSchema, (list, extra) => {
    try {
      const page = pages.page(principal.scopes, list.params?.cursor);
      request.sizes?.set(extra.requestId, page.bytes);
      return page.result;
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      const invalid = new ApiError(400, 'VALIDATION_ERROR', `Invalid cursor: it ${error.message}.`, {
        details: [{ field: 'params.cursor', message: error.message, code: 'cursor' }],
      });
      throw new McpError(ErrorCode.InvalidParams, invalid.message, invalid.toBody(request.requestId));
    }
  });

  mcp.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const name = call.params.name;
    const tool = catalog.tools.get(name);
    if (!tool) {
      const refused = catalog.refused.get(name);
      const error = refused
        ? new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', refused.reason)
        : new ApiError(404, 'ROUTE_NOT_FOUND', `No tool named "${name.slice(0, 128)}"; tools/list shows the tools this key may call.`);
      throw new McpError(ErrorCode.InvalidParams, error.message, error.toBody(request.requestId));
    }
    const result = await callTool(tool, call.params.arguments ?? {}, {
      api,
      config: app.config,
      operation: operations.get(name)!,
      authorization: request.authorization,
      client: request.client,
      requestId: request.requestId,
      log: request.log.child({ tool: name }),
    });
    request.sizes?.set(extra.requestId, resultBytes(result));
    return result;
  });
  return mcp;
}

/**
 * About how many bytes a tool result is as JSON, from its text (the answer's JSON, which structuredContent holds
 * again) rather than serialising the whole result once more; a link or a short text costs little either way.
 */
function resultBytes(result: CallToolResult): number {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c))).join('');
  return Buffer.byteLength(JSON.stringify(text)) + (result.structuredContent ? Buffer.byteLength(text) : 0) + 256;
}
