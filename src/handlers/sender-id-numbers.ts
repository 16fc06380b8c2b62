// Sender IDs section (openapi/paths/sender-ids.yaml), numbers: see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const senderIdNumbersHandlers = defineHandlers({});
