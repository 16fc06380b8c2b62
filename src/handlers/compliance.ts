// Compliance section: DNC, consent overrides, TCPA settings, content rules, keyword rules, reports.
import { defineHandlers } from '../http/handler-types.ts';

export const complianceHandlers = defineHandlers({});
