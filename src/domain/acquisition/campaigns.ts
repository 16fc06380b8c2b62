// Acquisition campaigns: CRUD and states. DRAFT → ACTIVE ⇄ PAUSED → ENDED (final); `type`, `listId`, `keyword` and
// `shortcode` are fixed at creation. A campaign whose `endsAt` has passed is ENDED (settled on every read, so
// its keyword is released without a background job).
import { isSupportedCountry } from 'libphonenumber-js/max';
import type { components } from '../../../generated/api.d.ts';
import * as q from '../../db/queries/acquisition/campaigns.ts';
import { countLivePending } from '../../db/queries/acquisition/pending.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { existingTagIds } from '../../db/queries/contacts/tags.ts';
import { getSender } from '../../db/queries/sender-ids/senders.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { ApiError, badRequest, conflict, found, unknownReference, type FieldError } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';

type S = components['schemas'];
export type CampaignRow = q.CampaignRow;
type CampaignStatus = S['AcquisitionCampaignStatus'];
export type CampaignView = { row: CampaignRow; enrollmentUrl: string };
export type CampaignDetail = CampaignView & { stats: q.CampaignStats & { pendingCount: number } };

/** The consent wording stored when a campaign is created without one. */
const DEFAULT_CONSENT_TEXT =
  'By signing up you agree to receive recurring automated marketing text messages at the number provided. Consent is not a condition of purchase. Msg frequency varies. Msg & data rates may apply. Reply HELP for help, STOP to cancel.';

/** The one transition table (AcquisitionCampaignStatus). */
const MOVES: Record<CampaignStatus, readonly CampaignStatus[]> = {
  DRAFT: ['ACTIVE', 'ENDED'],
  ACTIVE: ['PAUSED', 'ENDED'],
  PAUSED: ['ACTIVE', 'ENDED'],
  ENDED: [],
};

export function enrollmentUrlOf(services: Pick<Services, 'config'>, id: string): string {
  return `${services.config.assetBaseUrl.replace(/\/+$/, '')}/public/acquisition/${id}/enroll`;
}

const view = (services: Pick<Services, 'config'>, row: CampaignRow): CampaignView => ({
  row,
  enrollmentUrl: enrollmentUrlOf(services, row.id),
});

/** ENDED once `endsAt` has passed. */
export function settled(row: CampaignRow, now = new Date()): CampaignRow {
  return row.status !== 'ENDED' && row.ends_at && row.ends_at.getTime() <= now.getTime() ? { ...row, status: 'ENDED' } : row;
}

/** The campaign of the organization (settled), or 404. Stores an ENDED reached by `endsAt`. */
export async function loadCampaign(tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}): Promise<CampaignRow> {
  const row = found(await q.getCampaign(tenant.db, tenant.organizationId, id, opts), 'Acquisition campaign');
  const now = settled(row);
  if (now.status !== row.status) return (await q.updateCampaign(tenant.db, tenant.organizationId, id, { status: 'ENDED' }))!;
  return row;
}

/** `allowedCountries` entries that are no country with a telephone numbering plan (`body.allowedCountries.<i>`). */
function countryProblems(countries: readonly string[] | null | undefined): FieldError[] {
  return (countries ?? []).flatMap((c, i) =>
    isSupportedCountry(c) ? [] : [{ field: `body.allowedCountries.${i}`, message: `${c} is not a country with phone numbers` }],
  );
}

function windowProblems(startsAt: string | null | undefined, endsAt: string | null | undefined): FieldError[] {
  if (startsAt && endsAt && new Date(endsAt).getTime() <= new Date(startsAt).getTime()) {
    return [{ field: 'body.endsAt', message: 'must be after startsAt' }];
  }
  return [];
}

async function requireSenderId(tenant: Tenant, senderId: string | null | undefined): Promise<void> {
  if (senderId && !(await getSender(tenant.db, tenant.organizationId, senderId))) throw unknownReference('body.senderId', 'sender ID');
}

function keywordTaken(): ApiError {
  return new ApiError(409, 'ALREADY_EXISTS', 'Another campaign that has not ended already uses this keyword on this short code.', {
    details: [{ field: 'body.keyword', code: 'unique', message: 'keyword already in use on this short code' }],
  });
}

export async function listCampaigns(
  tenant: Tenant,
  services: Services,
  filter: { status?: string; type?: string },
): Promise<CampaignView[]> {
  const rows = await q.listCampaigns(tenant.db, tenant.organizationId, {});
  return rows
    .map((r) => settled(r))
    .filter((r) => (!filter.status || r.status === filter.status) && (!filter.type || r.type === filter.type))
    .map((r) => view(services, r));
}

/** AcquisitionCampaignCreateRequest flattened (the generated type is a union of its `anyOf` branches). */
type CreateBody = {
  name: string;
  description?: string | null;
  type: S['AcquisitionCampaignType'];
  status?: 'DRAFT' | 'ACTIVE';
  listId: string;
  keyword?: string;
  shortcode?: string;
  senderId?: string | null;
  welcomeMessage?: string | null;
  consentText?: string;
  redirectUrl?: string | null;
  startsAt?: string | null;
  endsAt?: string | null;
  confirmedOptIn?: boolean;
  allowedCountries?: string[] | null;
  maxSignupsPerHour?: number;
};

export async function createCampaign(
  tenant: Tenant,
  services: Services,
  request: S['AcquisitionCampaignCreateRequest'],
): Promise<CampaignView> {
  const body = request as CreateBody;
  const problems = windowProblems(body.startsAt, body.endsAt);
  if (problems.length) throw badRequest('The enrollment window ends before it starts.', problems);
  const countries = countryProblems(body.allowedCountries);
  if (countries.length) throw badRequest('allowedCountries names an unknown country.', countries);
  return inTenantTransaction(tenant, async (t) => {
    const { db, organizationId: orgId } = t;
    if (!(await existingTagIds(db, orgId, [body.listId.toLowerCase()])).has(body.listId.toLowerCase()))
      throw unknownReference('body.listId', 'tag');
    await requireSenderId(t, body.senderId);
    const keyword = body.type === 'KEYWORD' ? body.keyword!.toUpperCase() : null;
    const shortcode = body.type === 'KEYWORD' ? body.shortcode! : null;
    if (keyword && shortcode) {
      const live = (await q.listCampaigns(db, orgId, { type: 'KEYWORD' })).map((r) => settled(r));
      if (live.some((r) => r.status !== 'ENDED' && r.keyword === keyword && r.shortcode === shortcode)) throw keywordTaken();
    }
    const row = await q
      .insertCampaign(db, {
        organization_id: orgId,
        name: body.name,
        description: body.description ?? null,
        type: body.type,
        status: body.status ?? 'DRAFT',
        list_id: body.listId.toLowerCase(),
        keyword,
        shortcode,
        sender_id: body.senderId ?? null,
        welcome_message: body.welcomeMessage ?? null,
        consent_text: body.consentText ?? DEFAULT_CONSENT_TEXT,
        redirect_url: body.redirectUrl ?? null,
        starts_at: body.startsAt ?? null,
        ends_at: body.endsAt ?? null,
        confirmed_opt_in: body.confirmedOptIn ?? true,
        allowed_countries: body.allowedCountries ?? null,
        max_signups_per_hour: body.maxSignupsPerHour ?? 1000,
      })
      .catch((error: unknown) => {
        throw isUniqueViolation(error, q.KEYWORD_UNIQUE) ? keywordTaken() : error; // a concurrent create won
      });
    return view(services, row);
  });
}

export async function getCampaign(tenant: Tenant, services: Services, id: string): Promise<CampaignDetail> {
  const row = await loadCampaign(tenant, id);
  const stats = await q.campaignStats(tenant.db, tenant.organizationId, id);
  const pendingCount = await countLivePending(tenant.db, tenant.organizationId, id, new Date());
  return { ...view(services, row), stats: { ...stats, pendingCount } };
}

export async function updateCampaign(
  tenant: Tenant,
  services: Services,
  id: string,
  body: S['AcquisitionCampaignUpdateRequest'],
): Promise<CampaignView> {
  return inTenantTransaction(tenant, async (t) => {
    const current = await loadCampaign(t, id, { forUpdate: true });
    const immutable: FieldError[] = [];
    const changed = (field: string) =>
      immutable.push({ field: `body.${field}`, code: 'immutable', message: `${field} cannot be changed after creation` });
    if (body.type !== undefined && body.type !== current.type) changed('type');
    if (body.listId !== undefined && body.listId.toLowerCase() !== current.list_id) changed('listId');
    if (body.keyword !== undefined && (body.keyword?.toUpperCase() ?? null) !== current.keyword) changed('keyword');
    if (body.shortcode !== undefined && body.shortcode !== current.shortcode) changed('shortcode');
    if (immutable.length)
      throw badRequest('type, listId, keyword and shortcode cannot be changed; create a new campaign instead.', immutable);

    const startsAt = body.startsAt !== undefined ? body.startsAt : (current.starts_at?.toISOString() ?? null);
    const endsAt = body.endsAt !== undefined ? body.endsAt : (current.ends_at?.toISOString() ?? null);
    const problems = windowProblems(startsAt, endsAt);
    if (problems.length) throw badRequest('The enrollment window ends before it starts.', problems);
    const countries = countryProblems(body.allowedCountries);
    if (countries.length) throw badRequest('allowedCountries names an unknown country.', countries);

    const from = current.status as CampaignStatus;
    if (body.status !== undefined && body.status !== from && !MOVES[from].includes(body.status)) {
      throw conflict('INVALID_STATE', `A campaign cannot move from ${from} to ${body.status}.`);
    }
    if (body.senderId !== undefined) await requireSenderId(t, body.senderId);

    const row = await q.updateCampaign(t.db, t.organizationId, id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.senderId !== undefined ? { sender_id: body.senderId } : {}),
      ...(body.welcomeMessage !== undefined ? { welcome_message: body.welcomeMessage } : {}),
      ...(body.consentText !== undefined ? { consent_text: body.consentText } : {}),
      ...(body.redirectUrl !== undefined ? { redirect_url: body.redirectUrl } : {}),
      ...(body.startsAt !== undefined ? { starts_at: body.startsAt } : {}),
      ...(body.endsAt !== undefined ? { ends_at: body.endsAt } : {}),
      ...(body.confirmedOptIn !== undefined ? { confirmed_opt_in: body.confirmedOptIn } : {}),
      ...(body.allowedCountries !== undefined ? { allowed_countries: body.allowedCountries } : {}),
      ...(body.maxSignupsPerHour !== undefined ? { max_signups_per_hour: body.maxSignupsPerHour } : {}),
    });
    return view(services, settled(row!));
  });
}

export async function deleteCampaign(tenant: Tenant, id: string): Promise<void> {
  if (!(await q.deleteCampaign(tenant.db, tenant.organizationId, id))) throw found(null, 'Acquisition campaign');
}
