// Blasts section (openapi/paths/blasts.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const blastHandlers = defineHandlers({});
