// Sender IDs section, numbers: search the providers' inventory, purchase a search row (selection proof first,
// before any provider call), import a number the organization holds, release a number, list the leases.
//
// Lease states: a purchase or import records a PENDING, non-billed lease and makes its sender PENDING (not
// send-ready). Billing starts when the sender's campaign reaches REGISTERED (src/domain/submissions/review.ts:
// lease ACTIVE, billing_started_at); its monthly fee is charged into usage from that day until it is released
// (src/domain/submissions/fees.ts).
import { throughputOf } from './sending-rule.ts';
import { randomUUID } from 'node:crypto';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/sender-ids/numbers.ts';
import { numberManagedAnywhere } from '../../db/queries/sender-ids/managed-numbers.ts';
import { getSender, insertSender, type SenderRow } from '../../db/queries/sender-ids/senders.ts';
import { describeNumber, TOLL_FREE_PREFIXES } from '../../lib/nanp.ts';
import {
  NumberOrderUncertain,
  PROVIDER_NAMES,
  ProviderError,
  ProviderRejection,
  type InventoryNumber,
  type InventoryType,
  type NumberCapability,
  type ProviderName,
} from '../../providers/provider.ts';
import { ApiError, conflict, found, invalidField, unknownReference, unprocessable } from '../errors.ts';
import { providerOperation, providerUnsupported } from '../providers.ts';
import type { Services, Tenant } from '../tenant.ts';
import { PENDING_REASON } from './number-mappers.ts';
import { issueSelectionProof, verifySelectionProof } from './selection-proof.ts';
import type { SenderIdType } from '../../db/tables/enums.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type { NumberRow } from '../../db/queries/sender-ids/numbers.ts';
type NumberRow = q.NumberRow;

const DEFAULT_SEARCH_LIMIT = 10;

const upstream = (message: string) => new ApiError(502, 'UPSTREAM_ERROR', message);

// ---------------------------------------------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------------------------------------------

export type SearchFilter = {
  inventoryType: InventoryType;
  countryCode?: 'US' | 'CA' | undefined;
  provider?: ProviderName | undefined;
  leadingNumber?: string | undefined;
  region?: string | undefined;
  capabilities?: NumberCapability[] | undefined;
  limit?: number | undefined;
};

export type SearchRow = { row: InventoryNumber; proof: { proof: string; expiresAt: Date } | null };

/**
 * Matching rows of every provider asked (at most `limit`); purchasable ones carry a selection proof. Without a
 * `provider`, the slots whose provider searches numbers are asked; 422 PROVIDER_UNSUPPORTED when the one asked for
 * (or every one) cannot.
 */
export async function searchNumbers(tenant: Tenant, services: Services, filter: SearchFilter, now = new Date()): Promise<SearchRow[]> {
  if (filter.inventoryType === 'Toll-Free') {
    if (filter.region !== undefined) throw invalidField('body.region', 'applies to Local numbers only');
    if (filter.leadingNumber && !(TOLL_FREE_PREFIXES as readonly string[]).includes(filter.leadingNumber.slice(0, 3))) {
      throw invalidField('body.leadingNumber', `a Toll-Free search starts with one of ${TOLL_FREE_PREFIXES.join(', ')}`);
    }
  }
  const asked = (filter.provider ? [filter.provider] : PROVIDER_NAMES).map((name) => services.providers.slot(name));
  const searchable = asked.filter((p) => p.searchNumbers);
  if (searchable.length === 0) throw providerUnsupported(asked[0]!, 'number search', filter.provider ? 'body.provider' : undefined);
  const limit = filter.limit ?? DEFAULT_SEARCH_LIMIT;
  const answers = await Promise.allSettled(
    searchable.map((provider) =>
      providerOperation(
        provider,
        'searchNumbers',
        'number search',
      )({
        provider: provider.name,
        inventoryType: filter.inventoryType,
        countryCode: filter.countryCode ?? 'US',
        leadingNumber: filter.leadingNumber,
        region: filter.region,
        capabilities: filter.capabilities,
        limit,
      }),
    ),
  );
  const ok = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  if (ok.length === 0) {
    const reason = answers.find((a) => a.status === 'rejected')?.reason;
    if (reason instanceof ProviderError || reason instanceof ProviderRejection)
      throw upstream('No provider could be searched. Try again later.');
    throw reason;
  }
  const rows = ok.flat().sort((a, b) => a.number.localeCompare(b.number) || a.provider.localeCompare(b.provider));
  return rows.slice(0, limit).map((row) => ({
    row,
    proof: row.purchasable
      ? issueSelectionProof(
          {
            org: tenant.organizationId,
            nk: row.numberKey,
            n: row.number,
            it: row.inventoryType,
            p: row.provider,
            c: row.capabilities,
            m: row.monthlyCost,
          },
          now,
        )
      : null,
  }));
}

// ---------------------------------------------------------------------------------------------------------------
// Drafts (purchase and import)
// ---------------------------------------------------------------------------------------------------------------

const SENDER_TYPE: Record<InventoryType, SenderIdType> = { Local: 'LONG_CODE', 'Toll-Free': 'TOLL_FREE' };

/** The owning draft, locked: same organization (else 404), right type (400), DRAFT without a number (409). */
async function lockDraft(tx: TenantDb, tenant: Tenant, draftId: string, inventoryType: InventoryType): Promise<SenderRow> {
  const draft = await getSender(tx, tenant.organizationId, draftId, { forUpdate: true });
  if (!draft) throw unknownReference('body.draftSenderId', 'sender ID');
  if (draft.type !== SENDER_TYPE[inventoryType]) {
    throw invalidField(
      'body.draftSenderId',
      `a ${inventoryType} number needs a ${SENDER_TYPE[inventoryType]} draft (this sender is ${draft.type})`,
    );
  }
  if (draft.status !== 'DRAFT' || draft.phone_number !== null || (await q.liveNumberOfSender(tx, tenant.organizationId, draft.id))) {
    throw conflict('INVALID_STATE', 'The draft must be a sender in DRAFT without a number.');
  }
  return draft;
}

/** The draft takes the number, or (without a draft) a new sender is created with it; PENDING either way. */
async function senderFor(
  tx: TenantDb,
  tenant: Tenant,
  draft: SenderRow | undefined,
  lease: NumberRow,
  name: string | undefined,
  now: Date,
): Promise<SenderRow> {
  const senderId =
    draft?.id ??
    (
      await insertSender(tx, tenant.organizationId, {
        name: name ?? lease.number,
        type: SENDER_TYPE[lease.inventory_type as InventoryType],
        status: 'PENDING',
        provider: lease.provider,
        phone_number: lease.number,
        is_sandbox: false,
        throughput_per_second: throughputOf({
          type: SENDER_TYPE[lease.inventory_type as InventoryType],
          status: 'PENDING',
          countryCode: lease.country_code,
          isSandbox: false,
          campaignRegistered: false,
          vettingScore: null,
        }),
        updated_at: now,
      })
    ).id;
  return q.attachNumberToSender(
    tx,
    tenant.organizationId,
    senderId,
    {
      phoneNumber: lease.number,
      provider: lease.provider,
      countryCode: lease.country_code,
      numberId: lease.id,
      statusReason: PENDING_REASON,
    },
    now,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Purchase
// ---------------------------------------------------------------------------------------------------------------

export type PurchaseBody = {
  numberKey?: string;
  number?: string;
  selectionProof?: string;
  inventoryType?: InventoryType;
  draftSenderId?: string;
  name?: string;
};

type Reconciliation = {
  retryable: false;
  purchaseAttemptId: string;
  numberKey: string;
  number: string;
  inventoryType: InventoryType;
  provider: ProviderName;
  draftSenderId: string | null;
  senderIdId: string | null;
  numberId: string | null;
  upstreamOrderState: 'UNKNOWN' | 'PENDING' | 'COMPLETED';
  readOnlyChecks: string[];
};

/** An uncertain order: the NEEDS_RECONCILIATION lease it recorded stays (keepsWork) and the answer is replayed. */
const needsReconciliation = (reconciliation: Reconciliation) =>
  new ApiError(409, 'PURCHASE_NEEDS_RECONCILIATION', 'The provider did not confirm the order. Do not retry; reconcile read-only.', {
    extra: { reconciliation },
    keepsWork: true,
  });

/**
 * Buys one search row. The evidence is judged first (400 SELECTION_PROOF_INVALID), then the Toll-Free
 * requirements (400), then the draft (404 / 400 / 409), and only then is the provider asked. A definite refusal
 * stores nothing (422 / 502); an uncertain outcome records a NEEDS_RECONCILIATION lease and throws the 409
 * PURCHASE_NEEDS_RECONCILIATION (SenderIdPurchaseNumberConflict), whose writes the router keeps. `idempotencyKey`
 * is the one the router applies (RequestScope), required for Toll-Free.
 */
export async function purchaseNumber(
  tenant: Tenant,
  services: Services,
  body: PurchaseBody,
  idempotencyKey: string | undefined,
  now = new Date(),
): Promise<{ sender: SenderRow; lease: NumberRow }> {
  const claims = verifySelectionProof({ organizationId: tenant.organizationId, ...body }, now);
  if (claims.it === 'Toll-Free') {
    if (!idempotencyKey) throw invalidField('header.Idempotency-Key', 'required for a Toll-Free purchase');
    if (!body.draftSenderId) throw invalidField('body.draftSenderId', 'required for a Toll-Free purchase (the owning TOLL_FREE draft)');
  }
  const outcome = await inTransaction(tenant.db, async (tx) => {
    const draft = body.draftSenderId ? await lockDraft(tx, tenant, body.draftSenderId, claims.it) : undefined;
    if (draft?.provider && draft.provider !== claims.p) {
      throw new ApiError(
        400,
        'SELECTION_PROOF_INVALID',
        'The draft is at another provider than the selected number. Search that provider.',
        {
          details: [
            {
              field: 'body.draftSenderId',
              message: `the draft is at ${draft.provider}, the number at ${claims.p}`,
              code: 'provider_mismatch',
            },
          ],
        },
      );
    }
    const order = providerOperation(services.providers.slot(claims.p), 'orderNumber', 'number purchase', 'body.numberKey');
    const attemptId = randomUUID();
    const place = describeNumber(claims.n);
    const base = {
      number: claims.n,
      number_key: claims.nk,
      inventory_type: claims.it,
      provider: claims.p,
      source: 'PURCHASED' as const,
      country_code: place.countryCode,
      region: place.region,
      locality: place.locality,
    };
    try {
      await order({
        provider: claims.p,
        organizationId: tenant.organizationId,
        numberKey: claims.nk,
        number: claims.n,
        orderKey: attemptId,
      });
    } catch (error) {
      if (error instanceof NumberOrderUncertain) {
        const lease = await q.insertNumber(tx, tenant.organizationId, {
          ...base,
          id: attemptId,
          sender_id: draft?.id ?? null,
          status: 'NEEDS_RECONCILIATION',
          capabilities: claims.c,
          monthly_cost: claims.m,
          upstream_order_state: error.upstreamOrderState,
        });
        const checks = [`GET /v1/sender-ids/numbers?provider=${claims.p}`];
        if (draft) checks.push(`GET /v1/sender-ids/${draft.id}`);
        return {
          kind: 'needsReconciliation' as const,
          reconciliation: {
            retryable: false as const,
            purchaseAttemptId: attemptId,
            numberKey: claims.nk,
            number: claims.n,
            inventoryType: claims.it,
            provider: claims.p,
            draftSenderId: draft?.id ?? null,
            senderIdId: draft?.id ?? null,
            numberId: lease?.id ?? null,
            upstreamOrderState: error.upstreamOrderState,
            readOnlyChecks: checks,
          },
        };
      }
      if (error instanceof ProviderRejection && error.code === 'NUMBER_UNAVAILABLE') {
        throw unprocessable('UNPROCESSABLE', 'The number is no longer available. Search again.');
      }
      if (error instanceof ProviderRejection || error instanceof ProviderError)
        throw upstream('The provider refused the order; nothing was reserved.');
      throw error;
    }
    const lease = await q.insertNumber(tx, tenant.organizationId, {
      ...base,
      id: attemptId,
      sender_id: null,
      status: 'PENDING',
      capabilities: claims.c,
      monthly_cost: claims.m,
      upstream_order_state: 'COMPLETED',
    });
    if (!lease) throw conflict('ALREADY_EXISTS', 'The number is already held in this service.');
    const sender = await senderFor(tx, tenant, draft, lease, body.name, now);
    return { kind: 'purchased' as const, sender, lease: await q.setNumberSender(tx, tenant.organizationId, lease.id, sender.id) };
  });
  // Thrown once the transaction holding the lease has returned: the router commits it with this answer.
  if (outcome.kind === 'needsReconciliation') throw needsReconciliation(outcome.reconciliation);
  return outcome;
}

// ---------------------------------------------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------------------------------------------

export type ImportBody = { number: string; provider: ProviderName; inventoryType: InventoryType; draftSenderId?: string; name?: string };

/** Brings a number the organization holds at a provider under management: PENDING sender, PENDING lease, no fee. */
export async function importNumber(
  tenant: Tenant,
  services: Services,
  body: ImportBody,
  now = new Date(),
): Promise<{ sender: SenderRow; lease: NumberRow }> {
  if (!/^\+1[2-9]\d{2}[2-9]\d{6}$/.test(body.number)) throw invalidField('body.number', 'must be a US or Canadian (NANP) number');
  const place = describeNumber(body.number);
  if (place.inventoryType !== body.inventoryType)
    throw invalidField('body.inventoryType', `${body.number} is a ${place.inventoryType} number`);
  const confirm = providerOperation(services.providers.slot(body.provider), 'confirmNumberOwnership', 'number import', 'body.provider');
  // Our own records first: a number this service already manages (in any organization) is 409 without a provider call.
  if (await numberManagedAnywhere(tenant.db, body.number))
    throw conflict('ALREADY_EXISTS', 'The number is already managed by this service.');
  return inTransaction(tenant.db, async (tx) => {
    const draft = body.draftSenderId ? await lockDraft(tx, tenant, body.draftSenderId, body.inventoryType) : undefined;
    let confirmed: { owned: boolean; capabilities: NumberCapability[] };
    try {
      confirmed = await confirm({
        provider: body.provider,
        organizationId: tenant.organizationId,
        number: body.number,
        inventoryType: body.inventoryType,
      });
    } catch (error) {
      if (error instanceof ProviderError || error instanceof ProviderRejection)
        throw upstream('The provider could not confirm the number; nothing was created.');
      throw error;
    }
    if (!confirmed.owned)
      throw unprocessable('UNPROCESSABLE', `${body.provider} does not confirm ${body.number} as a number of your provider account.`);
    const lease = await q.insertNumber(tx, tenant.organizationId, {
      number: body.number,
      number_key: null,
      inventory_type: body.inventoryType,
      provider: body.provider,
      source: 'IMPORTED',
      status: 'PENDING',
      sender_id: null,
      country_code: place.countryCode,
      region: place.region,
      locality: place.locality,
      capabilities: confirmed.capabilities,
      monthly_cost: null,
      upstream_order_state: null,
    });
    if (!lease) throw conflict('ALREADY_EXISTS', 'The number is already managed by this service.');
    const sender = await senderFor(tx, tenant, draft, lease, body.name, now);
    return { sender, lease: await q.setNumberSender(tx, tenant.organizationId, lease.id, sender.id) };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Release and list
// ---------------------------------------------------------------------------------------------------------------

/** Releases once (a RELEASED number answers as it is); the sender it backed becomes DEACTIVATED. */
export async function releaseNumber(tenant: Tenant, services: Services, id: string, now = new Date()): Promise<NumberRow> {
  return inTransaction(tenant.db, async (tx) => {
    const lease = found(await q.getNumber(tx, tenant.organizationId, id, { forUpdate: true }), 'Number');
    if (lease.status === 'RELEASED') return lease;
    if (lease.status === 'NEEDS_RECONCILIATION')
      throw conflict('INVALID_STATE', 'A number that needs reconciliation cannot be released until it is reconciled.');
    const release = providerOperation(services.providers.slot(lease.provider as ProviderName), 'releaseNumber', 'number release');
    try {
      await release({
        provider: lease.provider as ProviderName,
        organizationId: tenant.organizationId,
        number: lease.number,
        source: lease.source,
      });
    } catch (error) {
      if (error instanceof ProviderError || error instanceof ProviderRejection)
        throw upstream('The provider refused the release; the number is unchanged.');
      throw error;
    }
    if (lease.sender_id) await q.deactivateSenderOfNumber(tx, tenant.organizationId, lease.sender_id, lease.number, now);
    return q.releaseNumber(tx, tenant.organizationId, lease.id, now);
  });
}

export function listNumbers(tenant: Tenant, filter: { provider?: ProviderName | undefined }, page: { limit: number; offset: number }) {
  return q.listNumbers(tenant.db, tenant.organizationId, filter, page);
}
