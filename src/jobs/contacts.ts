// Contacts section background jobs (imports, bulk tagging).
import type { JobDefinition } from './workers.ts';

export const contactJobs: JobDefinition[] = [];
