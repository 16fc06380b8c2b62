// The one way the Compliance section reports a per-organization limit: 422 UNPROCESSABLE naming the limit.
import { unprocessable } from '../errors.ts';

/** Throws 422 UNPROCESSABLE when the organization already has `max` (or more) of `what`. */
export function assertBelowLimit(count: number, max: number, what: string): void {
  if (count >= max) throw unprocessable('UNPROCESSABLE', `An organization can have at most ${max} ${what}.`);
}
