// JSON-RPC batches on POST /mcp (an array of messages in one HTTP request, MCP 2025-03-26). The SDK would run up
// to 100 messages of a batch at once and hold every answer until the last is done: 100 tools/list in a 6 KB
// batch built a 139 MB answer, and eight such requests took most of a 4.5 GB heap. Here a batch is bounded:
// - at most MAX_BATCH_MESSAGES messages, each with an id of its own (400 VALIDATION_ERROR before any runs);
// - its requests run one after the other, so a batch holds one request's work at a time (and when the client
//   goes away, the SDK aborts the running request, whose answer then never comes: those waiting are not run);
// - once its answers add up to more than BATCH_ANSWER_BYTES, the requests still waiting are not run: each is
//   answered with a JSON-RPC error whose `data` is a PAYLOAD_TOO_LARGE ErrorResponse. An answer is never cut,
//   and a request that ran always has its answer (a write is never done without the caller learning of it).
//   The handlers say how large their answers are (AnswerSizes: a tools/list page knows its bytes, a tool call its
//   text's), so an answer is not serialised once more just to be counted; anything else is measured.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { ApiError, type FieldError } from '../domain/errors.ts';

export const MAX_BATCH_MESSAGES = 10;
export const BATCH_ANSWER_BYTES = 4 * 1024 * 1024;
/** The JSON-RPC error code of a request left unrun because its batch's answers were too large (server-defined range). */
export const BATCH_TOO_LARGE_CODE = -32000;

/** Bytes of the answers the handlers already know, by JSON-RPC request id. */
export type AnswerSizes = Map<RequestId, number>;

/** 400 for a batch past MAX_BATCH_MESSAGES or with a request id given twice; the number of messages otherwise. */
export function checkBatch(batch: unknown[]): number {
  if (batch.length > MAX_BATCH_MESSAGES) {
    throw new ApiError(
      400,
      'VALIDATION_ERROR',
      `A JSON-RPC batch holds at most ${MAX_BATCH_MESSAGES} messages (this one has ${batch.length}); send the others in further requests.`,
      {
        details: [{ field: 'body', message: `must NOT have more than ${MAX_BATCH_MESSAGES} items`, code: 'maxItems' }],
      },
    );
  }
  const seen = new Map<unknown, number>();
  const problems: FieldError[] = [];
  batch.forEach((message, i) => {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' && typeof id !== 'number') return; // a notification, or malformed: the SDK answers
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else
      problems.push({
        field: `body.${i}.id`,
        message: `repeats the id of message ${first}: each request of a batch needs its own`,
        code: 'uniqueItems',
      });
  });
  if (problems.length)
    throw new ApiError(400, 'VALIDATION_ERROR', 'Each request of a JSON-RPC batch needs an id of its own.', { details: problems });
  return batch.length;
}

/**
 * Makes `transport` (connected to its server) run the requests of a batch one at a time, within
 * BATCH_ANSWER_BYTES of answers. Notifications pass straight through.
 */
export function runOneAtATime(transport: Transport, requestId: string, sizes: AnswerSizes): void {
  const run = transport.onmessage!;
  const send = transport.send.bind(transport);
  const waiting: Array<{ message: JSONRPCRequest; extra: MessageExtraInfo | undefined }> = [];
  let running: RequestId | undefined;
  let answered = 0;

  const next = async () => {
    while (running === undefined && waiting.length > 0) {
      const { message, extra } = waiting.shift()!;
      if (answered > BATCH_ANSWER_BYTES) {
        await send(tooLarge(message.id, requestId));
        continue;
      }
      running = message.id;
      run(message, extra);
    }
  };
  const fail = (error: unknown) => transport.onerror?.(error instanceof Error ? error : new Error(String(error)));

  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    if (!isJSONRPCRequest(message)) return run(message, extra);
    waiting.push({ message, extra });
    next().catch(fail);
  };
  transport.send = async (message, options) => {
    const id = running;
    const answer = (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && id !== undefined && message.id === id;
    if (!answer) return send(message, options);
    answered += sizes.get(id) ?? Buffer.byteLength(JSON.stringify(message));
    try {
      await send(message, options);
    } finally {
      running = undefined;
      next().catch(fail);
    }
  };
}

function tooLarge(id: RequestId, requestId: string): JSONRPCMessage {
  const error = new ApiError(
    413,
    'PAYLOAD_TOO_LARGE',
    `Not run: the answers of this batch already exceed ${BATCH_ANSWER_BYTES} bytes. Send this request again, alone or in a smaller batch.`,
  );
  return { jsonrpc: '2.0', id, error: { code: BATCH_TOO_LARGE_CODE, message: error.message, data: error.toBody(requestId) } };
}
