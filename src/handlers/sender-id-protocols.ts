// Sender IDs section (openapi/paths/sender-ids.yaml), protocols and voice forwarding: see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const senderIdProtocolsHandlers = defineHandlers({});
