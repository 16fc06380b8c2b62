// Submissions section (openapi/paths/submissions.yaml): see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const submissionHandlers = defineHandlers({});
