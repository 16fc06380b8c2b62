// Handlers are typed from generated/api.d.ts: the compiler checks each handler's input and output against
// the operation in openapi.yaml. A handler returns only success answers; errors are thrown as ApiError.
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../app-context.ts';
import type { Logger } from 'pino';
import type { Services, Tenant } from '../domain/tenant.ts';
import type { UploadedFile } from '../domain/files.ts';
import type { PublicClient } from '../domain/acquisition/client.ts';

export type { UploadedFile };

export type OperationId = keyof operations;
type Op<K extends OperationId> = operations[K];

type Part<K extends OperationId, W extends 'path' | 'query' | 'header'> =
  Op<K> extends { parameters: infer P }
    ? P extends { [X in W]?: infer T }
      ? [T] extends [never] | [undefined]
        ? Record<string, never>
        : NonNullable<T>
      : Record<string, never>
    : Record<string, never>;

type ContentOf<R> = R extends { content: infer C } ? C : never;
type BodyOf<R> = R extends { content?: never } ? undefined : ContentOf<R>[keyof ContentOf<R>];
type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody?: infer RB }
    ? [NonNullable<RB>] extends [never]
      ? undefined
      : NonNullable<RB> extends { content: infer C }
        ? C[keyof C]
        : undefined
    : undefined;

type Responses<K extends OperationId> = Op<K>['responses'];
// Any documented status (health answers 503 with its own body); errors are still normally thrown.
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, number>;

export type HandlerInput<K extends OperationId> = {
  path: Part<K, 'path'>;
  query: Part<K, 'query'>;
  headers: Part<K, 'header'>;
  body: RequestBody<K>;
  /** Files of a multipart body (their fields in `body` hold the file names). */
  files: UploadedFile[];
};

type HandlerResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: {
    status: S;
    body: BodyOf<Responses<K>[S]>;
    headers?: Record<string, string>;
    /** Needed only for non-JSON bodies (CSV, binary). */
    contentType?: string;
  };
}[SuccessStatus<K>];

/** What an authenticated operation's handler gets. */
export type RequestScope = {
  tenant: Tenant;
  services: Services;
  requestId: string;
  log: Logger;
  /** The Idempotency-Key the router applies to this request (src/http/api.ts), for operations that declare it. */
  idempotencyKey: string | undefined;
};

/**
 * What a public (`security: []`) operation's handler gets: the system handle, no tenant, and the caller's
 * address (the socket's, or what TRUST_PROXY lets X-Forwarded-For say; src/http/client.ts).
 */
type PublicScope = { app: AppContext; client: PublicClient; requestId: string; log: Logger };

export type Handler<K extends OperationId> = (input: HandlerInput<K>, scope: RequestScope) => Promise<HandlerResult<K>>;
export type PublicHandler<K extends OperationId> = (input: HandlerInput<K>, scope: PublicScope) => Promise<HandlerResult<K>>;

export type HandlerMap = { [K in OperationId]?: Handler<K> | PublicHandler<K> };

const publicHandlers = new WeakSet<object>();

/** Declares a section's handlers; unknown operationIds and wrong shapes fail to compile. */
export function defineHandlers<T extends { [K in OperationId]?: Handler<K> }>(
  handlers: T & Record<Exclude<keyof T, OperationId>, never>,
): T {
  return handlers;
}

/** Declares handlers of public operations (`security: []`); start-up refuses them on any other operation. */
export function definePublicHandlers<T extends { [K in OperationId]?: PublicHandler<K> }>(
  handlers: T & Record<Exclude<keyof T, OperationId>, never>,
): T {
  for (const h of Object.values(handlers)) publicHandlers.add(h as object);
  return handlers;
}

export const isPublicHandler = (handler: unknown): boolean => typeof handler === 'function' && publicHandlers.has(handler);
