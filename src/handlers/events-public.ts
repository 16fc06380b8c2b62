// Events section (openapi/paths/events.yaml), the one public operation (`security: []`): public acquisition
// enrollment. See README "Adding an operation" (public handlers get the system context, no tenant).
import { definePublicHandlers } from '../http/handler-types.ts';

export const publicEventHandlers = definePublicHandlers({});
