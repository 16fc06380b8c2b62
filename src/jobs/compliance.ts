// Compliance section background jobs.
import type { JobDefinition } from './job-definition.ts';

export const complianceJobs: JobDefinition[] = [];
