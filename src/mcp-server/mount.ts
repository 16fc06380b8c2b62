// POST /mcp: the API as an MCP server (Streamable HTTP, stateless; handler.ts). The MCP SDK and the tool catalogue
// (one tool per operation) cost about 250 ms to load and build, and nothing before the first MCP message needs
// them: they are loaded then, once per process, and every message waits for the same build (bench part a).
// (Not the MCP configuration section of the spec, src/domain/mcp/: that is a customer's own MCP server.)
import type express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../app-context.ts';
import type { Api } from '../http/api.ts';
import { ApiError } from '../domain/errors.ts';
import type { KeyRateLimiter } from '../http/rate-limit.ts';

const MCP_PATH = '/mcp';

export function mountMcpServer(server: express.Express, app: AppContext, api: Api, rateLimit: KeyRateLimiter): void {
  let handler: Promise<RequestHandler> | undefined;
  server.post(MCP_PATH, (req: Request, res: Response, next: NextFunction) => {
    handler ??= import('./handler.ts').then((m) => m.createMcpHandler(app, api, rateLimit));
    handler.then(
      (handle) => handle(req, res, next),
      (error: unknown) => {
        handler = undefined; // a failed build is tried again by the next message
        next(error);
      },
    );
  });
  server.all(MCP_PATH, (req: Request, _res: Response, next: NextFunction) => {
    next(
      new ApiError(
        405,
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed on ${MCP_PATH}: the MCP server is stateless, POST each message.`,
        { headers: { Allow: 'POST' } },
      ),
    );
  });
}
