// Sender IDs section (openapi/paths/sender-ids.yaml), the deprecated /v1/channels view and its RCS senders: see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const senderIdChannelsHandlers = defineHandlers({});
