// Webhooks section: endpoint management, test deliveries, delivery attempts.
import { defineHandlers } from '../http/handler-types.ts';

export const webhookHandlers = defineHandlers({});
