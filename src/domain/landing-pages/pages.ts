// Landing pages (Common section): create from a template or the default, PATCH, delete, publish/unpublish/archive
// through the one transition table (states.ts), and the submissions list. Rules from the landing-page paths of openapi.yaml:
// 1–20 form fields with unique keys and exactly one `phone`; a `select` needs `options`; the hero asset must be an
// image/gif of the organization (and `ready` to publish); tags of the organization; `https` redirect; slug from
// the name made unique with a numeric suffix, an explicit slug in use → 409 ALREADY_EXISTS. A tied acquisition
// campaign must be the organization's, and the page's consent then required and MARKETING.
import type { components } from '../../../generated/api.d.ts';
import { getCampaign } from '../../db/queries/acquisition/campaigns.ts';
import { getAsset } from '../../db/queries/assets/assets.ts';
import { existingTagIds } from '../../db/queries/contacts/tags.ts';
import * as q from '../../db/queries/landing-pages/pages.ts';
import type { Page, PageRequest } from '../../db/paging.ts';
import type { LandingPageState, StoredConsent, StoredFormField, StoredTheme } from '../../db/tables/landing-pages.ts';
import { inTenantTransaction } from '../messaging/context.ts';
import { badRequest, conflict, found, unknownReference, type FieldError } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import { DEFAULT_PAGE, findTemplate } from './catalog.ts';
import { transition, type LandingPageAction } from './states.ts';

type S = components['schemas'];
type CreateRequest = S['LandingPageCreateRequest'];
type UpdateRequest = S['LandingPageUpdateRequest'];
type FieldInput = S['LandingPageFormFieldInput'];

export type LandingPageView = q.LandingPageRow & { submission_count: number };

const MAX_SLUG = 64;

/** A slug from a name: lower-case ASCII letters and digits joined by single dashes ("page" when nothing is left). */
function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG - 4)
    .replace(/-+$/, '');
  return slug || 'page';
}

function normalizeFields(fields: readonly FieldInput[]): StoredFormField[] {
  return fields.map((f) => ({
    key: f.key,
    label: f.label,
    type: f.type,
    required: f.type === 'phone' ? true : (f.required ?? false),
    options: f.type === 'select' ? (f.options ?? null) : null,
    attributeKey: f.attributeKey ?? null,
  }));
}

function fieldProblems(fields: readonly StoredFormField[]): FieldError[] {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    if (seen.has(f.key)) problems.push({ field: `body.formFields.${i}.key`, message: `duplicate key "${f.key}"` });
    seen.add(f.key);
    if (f.type === 'select' && !f.options?.length)
      problems.push({ field: `body.formFields.${i}.options`, message: 'a select field needs options' });
  });
  const phones = fields.filter((f) => f.type === 'phone').length;
  if (phones !== 1) problems.push({ field: 'body.formFields', message: `must contain exactly one field of type phone (found ${phones})` });
  return problems;
}

function redirectProblems(url: string | null | undefined): FieldError[] {
  if (url === null || url === undefined) return [];
  try {
    if (new URL(url).protocol === 'https:') return [];
  } catch {
    /* not a URL */
  }
  return [{ field: 'body.redirectUrl', message: 'must be an https URL' }];
}

/** Hero asset and tags still exist (and, to publish, the asset is ready): the problems as field errors, named
 * `body.<field>` on create/update and by the page's field alone on publish (which has no body). */
async function referenceProblems(
  t: Tenant,
  p: { heroAssetId: string | null; tagIds: readonly string[] },
  publishing: boolean,
): Promise<FieldError[]> {
  const problems: FieldError[] = [];
  const at = (f: string) => (publishing ? f : `body.${f}`);
  if (p.heroAssetId) {
    const asset = await getAsset(t.db, t.organizationId, p.heroAssetId);
    if (!asset) problems.push({ field: at('heroAssetId'), message: 'no such asset in this organization' });
    else if (asset.type !== 'image' && asset.type !== 'gif')
      problems.push({ field: at('heroAssetId'), message: `must be an image or gif asset (it is ${asset.type})` });
    else if (publishing && asset.status !== 'ready')
      problems.push({ field: at('heroAssetId'), message: `the asset is not ready (status ${asset.status})` });
  }
  if (p.tagIds.length) {
    const existing = await existingTagIds(t.db, t.organizationId, [...p.tagIds]);
    p.tagIds.forEach((id, i) => {
      if (!existing.has(id)) problems.push({ field: at(`tagIds.${i}`), message: 'no such tag in this organization' });
    });
  }
  return problems;
}

async function campaignProblems(t: Tenant, campaignId: string | null, consent: StoredConsent): Promise<FieldError[]> {
  if (!campaignId) return [];
  if (!(await getCampaign(t.db, t.organizationId, campaignId)))
    throw unknownReference('body.acquisitionCampaignId', 'acquisition campaign');
  return consent.required && consent.messageType === 'MARKETING'
    ? []
    : [{ field: 'body.consent', message: 'a page tied to an acquisition campaign needs a required MARKETING consent' }];
}

function refuse(problems: FieldError[]): void {
  if (problems.length) throw badRequest('The landing page is not valid.', problems.slice(0, 20));
}

async function freeSlug(t: Tenant, base: string): Promise<string> {
  const taken = await q.slugsLike(t.db, t.organizationId, base);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

async function assertSlugFree(t: Tenant, slug: string, exceptId: string | null): Promise<void> {
  const other = await q.pageBySlug(t.db, t.organizationId, slug);
  if (other && other.id !== exceptId)
    throw conflict('ALREADY_EXISTS', `Another landing page of the organization already uses the slug "${slug}".`);
}

const withCount = async (t: Tenant, row: q.LandingPageRow): Promise<LandingPageView> => ({
  ...row,
  submission_count: await q.submissionCount(t.db, t.organizationId, row.id),
});

export function listPages(tenant: Tenant, status: LandingPageState | undefined, page: PageRequest): Promise<Page<LandingPageView>> {
  return q.listPages(tenant.db, tenant.organizationId, status, page);
}

export async function getPage(tenant: Tenant, id: string): Promise<LandingPageView> {
  return withCount(tenant, found(await q.getPage(tenant.db, tenant.organizationId, id), 'Landing page'));
}

export async function createPage(tenant: Tenant, body: CreateRequest): Promise<LandingPageView> {
  const template = body.templateId === undefined ? undefined : findTemplate(body.templateId);
  if (body.templateId !== undefined && !template) refuse([{ field: 'body.templateId', message: 'no such template in the catalog' }]);
  const d = template?.defaults ?? DEFAULT_PAGE;
  const formFields = body.formFields ? normalizeFields(body.formFields) : d.formFields;
  const consent: StoredConsent = body.consent
    ? { text: body.consent.text, required: body.consent.required ?? true, messageType: body.consent.messageType ?? 'MARKETING' }
    : d.consent;
  const theme: StoredTheme = { ...d.theme, ...body.theme };
  const heroAssetId = body.heroAssetId ?? null;
  const tagIds = body.tagIds ?? [];
  const campaignId = body.acquisitionCampaignId ?? null;
  refuse([...fieldProblems(formFields), ...redirectProblems(body.redirectUrl)]);
  return inTenantTransaction(tenant, async (t) => {
    refuse([...(await referenceProblems(t, { heroAssetId, tagIds }, false)), ...(await campaignProblems(t, campaignId, consent))]);
    await q.lockSlugs(t.db, t.organizationId);
    let slug = body.slug;
    if (slug !== undefined) await assertSlugFree(t, slug, null);
    else slug = await freeSlug(t, slugify(body.name));
    const row = await q.insertPage(t.db, t.organizationId, {
      name: body.name,
      slug,
      template_id: template?.id ?? null,
      acquisition_campaign_id: campaignId,
      title: body.title ?? d.title,
      headline: body.headline ?? d.headline,
      body: body.body === undefined ? d.body : body.body,
      hero_asset_id: heroAssetId,
      form_fields: JSON.stringify(formFields),
      consent: JSON.stringify(consent),
      submit_label: body.submitLabel ?? d.submitLabel,
      success_message: body.successMessage ?? d.successMessage,
      redirect_url: body.redirectUrl ?? null,
      tag_ids: JSON.stringify(tagIds),
      theme: JSON.stringify(theme),
    });
    return { ...row, submission_count: 0 };
  });
}

export async function updatePage(tenant: Tenant, id: string, body: UpdateRequest): Promise<LandingPageView> {
  return inTenantTransaction(tenant, async (t) => {
    const row = found(await q.getPage(t.db, t.organizationId, id, { forUpdate: true }), 'Landing page');
    if (row.status === 'ARCHIVED') throw conflict('INVALID_STATE', 'An ARCHIVED landing page is read-only.');
    const status = body.status === 'ARCHIVED' ? transition(row.status, 'archive').to : row.status;
    const formFields = body.formFields ? normalizeFields(body.formFields) : row.form_fields;
    const consent: StoredConsent = body.consent
      ? { text: body.consent.text, required: body.consent.required ?? true, messageType: body.consent.messageType ?? 'MARKETING' }
      : row.consent;
    const heroAssetId = body.heroAssetId === undefined ? row.hero_asset_id : body.heroAssetId;
    const tagIds = body.tagIds ?? row.tag_ids;
    const campaignId = body.acquisitionCampaignId === undefined ? row.acquisition_campaign_id : body.acquisitionCampaignId;
    refuse([...(body.formFields ? fieldProblems(formFields) : []), ...redirectProblems(body.redirectUrl)]);
    refuse([
      ...(await referenceProblems(t, { heroAssetId: body.heroAssetId ?? null, tagIds: body.tagIds ?? [] }, false)),
      ...(await campaignProblems(t, campaignId, consent)),
    ]);
    if (body.slug !== undefined && body.slug !== row.slug) {
      await q.lockSlugs(t.db, t.organizationId);
      await assertSlugFree(t, body.slug, row.id);
    }
    const updated = await q.updatePage(t.db, t.organizationId, id, {
      status,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.slug !== undefined ? { slug: body.slug } : {}),
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.headline !== undefined ? { headline: body.headline } : {}),
      ...(body.body !== undefined ? { body: body.body } : {}),
      ...(body.submitLabel !== undefined ? { submit_label: body.submitLabel } : {}),
      ...(body.successMessage !== undefined ? { success_message: body.successMessage } : {}),
      ...(body.redirectUrl !== undefined ? { redirect_url: body.redirectUrl } : {}),
      ...(body.theme !== undefined ? { theme: JSON.stringify({ ...row.theme, ...body.theme }) } : {}),
      hero_asset_id: heroAssetId,
      acquisition_campaign_id: campaignId,
      form_fields: JSON.stringify(formFields),
      consent: JSON.stringify(consent),
      tag_ids: JSON.stringify(tagIds),
    });
    return withCount(t, updated!);
  });
}

export async function deletePage(tenant: Tenant, id: string): Promise<void> {
  await inTenantTransaction(tenant, async (t) => {
    const row = found(await q.getPage(t.db, t.organizationId, id, { forUpdate: true }), 'Landing page');
    if (row.status === 'PUBLISHED') throw conflict('INVALID_STATE', 'A PUBLISHED landing page must be unpublished before it is deleted.');
    await q.deletePage(t.db, t.organizationId, id);
  });
}

/** publish / unpublish through the transition table; a repeat is a no-op. */
export async function applyAction(tenant: Tenant, id: string, action: Exclude<LandingPageAction, 'archive'>): Promise<LandingPageView> {
  return inTenantTransaction(tenant, async (t) => {
    const row = found(await q.getPage(t.db, t.organizationId, id, { forUpdate: true }), 'Landing page');
    const { to, changed } = transition(row.status, action);
    if (!changed) return withCount(t, row);
    if (action === 'publish') refuse(await referenceProblems(t, { heroAssetId: row.hero_asset_id, tagIds: row.tag_ids }, true));
    const updated = await q.updatePage(t.db, t.organizationId, id, {
      status: to,
      ...(action === 'publish' ? { published_at: new Date() } : {}),
    });
    return withCount(t, updated!);
  });
}

export async function listSubmissions(tenant: Tenant, id: string, page: PageRequest): Promise<Page<q.LandingPageSubmissionRow>> {
  found(await q.getPage(tenant.db, tenant.organizationId, id), 'Landing page');
  return q.listSubmissions(tenant.db, tenant.organizationId, id, page);
}
