// Bots section (openapi/paths/bots.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const botHandlers = defineHandlers({});
