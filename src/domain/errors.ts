// The one error helper. Services (src/domain) throw ApiError with a stable code; the HTTP layer turns it into an
// ErrorResponse. It lives in the domain because the rules that refuse a request are the domain's.
import type { components } from '../../generated/api.d.ts';

export type ErrorCode = components['schemas']['ErrorCode'];
export type FieldError = components['schemas']['FieldError'];
export type ErrorResponse = components['schemas']['ErrorResponse'];

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly extra: Record<string, unknown> | undefined;
  /**
   * The request's writes stand although it answers this error (a purchase the provider left uncertain records its
   * lease): the router commits them instead of rolling back, and an Idempotency-Key replays this answer.
   */
  readonly keepsWork: boolean;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    opts: { details?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown>; keepsWork?: boolean } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = opts.details;
    this.headers = opts.headers;
    this.extra = opts.extra;
    this.keepsWork = opts.keepsWork ?? false;
  }

  toBody(requestId: string): ErrorResponse {
    return {
      code: this.code,
      message: this.message,
      requestId,
      ...(this.details ? { details: this.details } : {}),
      ...(this.extra ?? {}),
    };
  }
}

export const badRequest = (message: string, details?: FieldError[], code: ErrorCode = 'VALIDATION_ERROR') =>
  new ApiError(400, code, message, details ? { details } : {});
export const invalidField = (field: string, message: string, code: ErrorCode = 'VALIDATION_ERROR') =>
  new ApiError(400, code, message, { details: [{ field, message }] });
export const unauthenticated = (message = 'Missing or invalid API key.') => new ApiError(401, 'UNAUTHENTICATED', message);
export const forbidden = (message: string) => new ApiError(403, 'FORBIDDEN', message);
export const notFound = (what = 'Resource') => new ApiError(404, 'NOT_FOUND', `${what} not found.`);
export const conflict = (code: ErrorCode, message: string) => new ApiError(409, code, message);
export const unprocessable = (code: ErrorCode, message: string) => new ApiError(422, code, message);
export const notImplemented = (operationId: string) =>
  new ApiError(501, 'NOT_IMPLEMENTED', `Operation ${operationId} is documented but not implemented by this server yet.`);

/** Most `details` one answer lists (the API description's "Errors"; request validation keeps as many). */
export const MAX_FIELD_ERRORS = 20;

/**
 * The one answer for an id inside a request body that names no resource of the caller's organization (another
 * organization's ids included): 404 NOT_FOUND with one `details` entry per such field. Fields are named as request
 * validation names them, `<location>.<dotted path>` with numeric indices: `body.contactId`, `body.tags.3`,
 * `body.events.3.contactId` (see `bodyField`). `what` is the resource in lower case ("contact", "sender ID").
 * An id in the path answers `notFound()` / `found()` instead: there is no field to point at.
 */
export function unknownReference(field: string | readonly string[], what: string): ApiError {
  const fields = typeof field === 'string' ? [field] : field;
  return new ApiError(404, 'NOT_FOUND', `${what.charAt(0).toUpperCase()}${what.slice(1)} not found.`, {
    details: fields
      .slice(0, MAX_FIELD_ERRORS)
      .map((f) => ({ field: f, message: `no such ${what} in this organization`, code: 'not_found' })),
  });
}

/** `bodyField('contactIds', 3)` → `body.contactIds.3`: the field path form of every `details` entry. */
export const bodyField = (...path: ReadonlyArray<string | number>): string => ['body', ...path].join('.');

/** The one get-or-404: a row of the caller's organization, or 404 naming what was not found. */
export function found<T>(row: T | null | undefined, what: string): T {
  if (row === null || row === undefined) throw notFound(what);
  return row;
}
