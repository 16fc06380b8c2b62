// Programs section (openapi/paths/programs.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const programHandlers = defineHandlers({});
