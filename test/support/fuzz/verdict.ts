// What every answer to a hostile request must be: no 5xx except 501 NOT_IMPLEMENTED and those the operation
// documents (503 from /health), and every 4xx/5xx an ErrorResponse `{code, message, requestId}` in JSON.
import type { RawResponse } from './http.ts';

export type Verdict = { ok: true } | { ok: false; problem: string };

export function judge(res: RawResponse, opts: { documented5xx?: readonly number[]; errorCodes: ReadonlySet<string> }): Verdict {
  if (res.error) return { ok: false, problem: `no answer (${res.error})` };
  const text = res.body.toString('utf8');
  const excerpt = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  let parsed: any;
  const contentType = String(res.headers['content-type'] ?? '');
  if (contentType.includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  const allowed5xx =
    (res.status === 501 && parsed?.code === 'NOT_IMPLEMENTED') || (res.status !== 501 && (opts.documented5xx ?? []).includes(res.status));
  if (res.status >= 500 && !allowed5xx) return { ok: false, problem: `${res.status} ${excerpt || '(empty body)'}` };
  if (res.status >= 400) {
    if (!contentType.includes('json'))
      return {
        ok: false,
        problem: `${res.status} without a JSON ErrorResponse (content-type ${JSON.stringify(contentType)}, body ${JSON.stringify(excerpt)})`,
      };
    const missing = ['code', 'message', 'requestId'].filter((k) => typeof parsed?.[k] !== 'string' || parsed[k] === '');
    if (missing.length) return { ok: false, problem: `${res.status} ErrorResponse lacks ${missing.join(', ')}: ${excerpt}` };
    if (!opts.errorCodes.has(parsed.code))
      return { ok: false, problem: `${res.status} ErrorResponse code ${JSON.stringify(parsed.code)} is not an ErrorCode` };
  }
  if (res.status < 100 || res.status > 599) return { ok: false, problem: `impossible status ${res.status}` };
  return { ok: true };
}

/** `500 INTERNAL_ERROR: Internal server error.` — a short label for grouping failures. */
export function label(res: RawResponse): string {
  if (res.error) return `no answer: ${res.error}`;
  try {
    const b = JSON.parse(res.body.toString('utf8'));
    return `${res.status} ${b.code}: ${String(b.message).slice(0, 160)}`;
  } catch {
    return `${res.status} ${res.body.toString('utf8').slice(0, 160)}`;
  }
}
