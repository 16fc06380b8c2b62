// Events section (openapi/paths/events.yaml): event triggers and acquisition campaigns: see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const eventHandlers = defineHandlers({});
