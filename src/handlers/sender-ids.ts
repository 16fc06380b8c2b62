// Sender IDs section (openapi/paths/sender-ids.yaml), core (CRUD and lifecycle): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const senderIdsHandlers = defineHandlers({});
