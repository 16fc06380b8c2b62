// Templates section (openapi/paths/templates.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const templateHandlers = defineHandlers({});
