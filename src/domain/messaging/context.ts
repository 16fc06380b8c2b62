// What the section's services share: the tenant bound to one transaction, and the job queue they enqueue on.
import { inTransaction, type TransactionOptions } from '../../db/database.ts';
import type { TenantDb } from '../../db/tenant.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Services, Tenant } from '../tenant.ts';

/**
 * Runs `work` in one transaction of the tenant's database (joining the one `tenant.db` already is, such as an
 * Idempotency-Key's), with a tenant bound to it: a transaction opened on a TenantDb keeps its guard.
 */
export function inTenantTransaction<T>(tenant: Tenant, work: (tenant: Tenant) => Promise<T>, options?: TransactionOptions): Promise<T> {
  return inTransaction(
    tenant.db,
    (tx) => work((tx as unknown) === tenant.db ? tenant : { ...tenant, db: tx as unknown as TenantDb }),
    options,
  );
}

/** The job queue (absent only in one-shot tools, which never send). */
export function queueOf(services: Pick<Services, 'queue'>): JobQueue {
  if (!services.queue) throw new Error('sending needs the job queue');
  return services.queue;
}
