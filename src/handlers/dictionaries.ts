// Dictionaries section (openapi/paths/dictionaries.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const dictionaryHandlers = defineHandlers({});
