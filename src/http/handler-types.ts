// Handlers are typed from generated/api.d.ts: the compiler checks each handler's input and output against
// the operation in openapi.yaml. A handler returns only success answers; errors are thrown as ApiError.
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../app-context.ts';
import type { Principal } from '../auth/principal.ts';
import type { Logger } from 'pino';

export type OperationId = keyof operations;
type Op<K extends OperationId> = operations[K];

type Part<K extends OperationId, W extends 'path' | 'query' | 'header'> = Op<K> extends { parameters: infer P }
  ? P extends { [X in W]?: infer T }
    ? [T] extends [never] | [undefined]
      ? Record<string, never>
      : NonNullable<T>
    : Record<string, never>
  : Record<string, never>;

type ContentOf<R> = R extends { content: infer C } ? C : never;
type BodyOf<R> = R extends { content?: never } ? undefined : ContentOf<R>[keyof ContentOf<R>];
type RequestBody<K extends OperationId> = Op<K> extends { requestBody?: infer RB }
  ? [NonNullable<RB>] extends [never]
    ? undefined
    : NonNullable<RB> extends { content: infer C }
      ? C[keyof C]
      : undefined
  : undefined;

type Responses<K extends OperationId> = Op<K>['responses'];
// Any documented status (health answers 503 with its own body); errors are still normally thrown.
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, number>;

export type UploadedFile = {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  data: Buffer;
};

export type HandlerInput<K extends OperationId> = {
  path: Part<K, 'path'>;
  query: Part<K, 'query'>;
  headers: Part<K, 'header'>;
  body: RequestBody<K>;
  /** Files of a multipart body (their fields in `body` hold the file names). */
  files: UploadedFile[];
};

export type HandlerResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: {
    status: S;
    body: BodyOf<Responses<K>[S]>;
    headers?: Record<string, string>;
    /** Needed only for non-JSON bodies (CSV, binary). */
    contentType?: string;
  };
}[SuccessStatus<K>];

export type RequestScope = {
  app: AppContext;
  requestId: string;
  log: Logger;
  /** Present on every authenticated operation; undefined only on `security: []` operations. */
  principal: Principal | undefined;
};

export type Handler<K extends OperationId> = (input: HandlerInput<K>, scope: RequestScope) => Promise<HandlerResult<K>>;

export type HandlerMap = { [K in OperationId]?: Handler<K> };

/** Declares a section's handlers; unknown operationIds and wrong shapes fail to compile. */
export function defineHandlers<T extends HandlerMap>(handlers: T & Record<Exclude<keyof T, OperationId>, never>): T {
  return handlers;
}

/** The principal of an authenticated operation (throws if called on a public one). */
export function requirePrincipal(scope: RequestScope): Principal {
  if (!scope.principal) throw new Error('requirePrincipal called on an unauthenticated operation');
  return scope.principal;
}
