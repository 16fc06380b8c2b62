// Contacts section: contacts, tags, segments, imports, bulk tagging.
import { defineHandlers } from '../http/handler-types.ts';

export const contactHandlers = defineHandlers({});
