// Every request's database work runs in a StatementScope (src/db/statement-scope.ts): its statements get the
// request's statement_timeout, and when the client disconnects before the answer is complete, the statement it is
// running is cancelled. A statement over the limit answers 504 QUERY_TIMEOUT (openapi.yaml, "Request limits").
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Operation } from 'openapi-backend';
import { ApiError } from '../domain/errors.ts';
import { isQueryCanceled } from '../db/errors.ts';
import { currentStatementScope, runInStatementScope, StatementScope } from '../db/statement-scope.ts';

/** Opens the request's scope with the server's default limit (STATEMENT_TIMEOUT_SECONDS). */
export function statementScopes(defaultTimeoutMs: number): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    const gone = new AbortController();
    // 'close' before the answer was fully handed to the socket: the client (or its connection) went away.
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    runInStatementScope(new StatementScope(defaultTimeoutMs, gone.signal), next);
  };
}

/** An operation documented with a longer limit (`x-statement-timeout-seconds`: work over a whole audience) gets it. */
export function applyOperationTimeout(operation: Operation): void {
  const seconds = (operation as { 'x-statement-timeout-seconds'?: number })['x-statement-timeout-seconds'];
  const scope = currentStatementScope();
  if (scope && typeof seconds === 'number') scope.timeoutMs = seconds * 1000;
}

/** Whether the request's client is gone (its statements were cancelled because of it: nothing to answer or log). */
export const clientGone = (): boolean => currentStatementScope()?.signal?.aborted === true;

/** A statement stopped by the request's statement_timeout → 504 QUERY_TIMEOUT; undefined for any other error. */
export function statementTimeoutError(error: unknown): ApiError | undefined {
  if (!isQueryCanceled(error)) return undefined;
  const seconds = (currentStatementScope()?.timeoutMs ?? 0) / 1000;
  return new ApiError(
    504,
    'QUERY_TIMEOUT',
    `The request's database work did not finish within its limit${seconds ? ` of ${seconds} s` : ''}; the statement that ran out changed nothing. Narrow the request (fewer or simpler conditions, a smaller page) or retry later.`,
  );
}
