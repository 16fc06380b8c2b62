// Webhooks section background jobs (deliveries and their retries).
import type { JobDefinition } from './workers.ts';

export const webhookJobs: JobDefinition[] = [];
