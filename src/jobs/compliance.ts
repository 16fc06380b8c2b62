// Compliance section background jobs.
import type { JobDefinition } from './workers.ts';

export const complianceJobs: JobDefinition[] = [];
