// Stored landing page rows and the code catalogue → the document's shapes (LandingPage, LandingPageTemplate,
// LandingPageSubmission). `baseUrl` is the server's public address (config.assetBaseUrl).
import type { components } from '../../../generated/api.d.ts';
import type { LandingPageSubmissionRow } from '../../db/queries/landing-pages/pages.ts';
import type { StoredConsent, StoredFormField, StoredTheme } from '../../db/tables/landing-pages.ts';
import type { LandingPageTemplate as CatalogTemplate } from './catalog.ts';
import type { LandingPageView } from './pages.ts';

type S = components['schemas'];

// The generated types of the allOf shapes (input & `Record<string, never>`) admit no object literal; the stored
// values are exactly those shapes with every default filled in.
const fields = (f: readonly StoredFormField[]) => f as unknown as S['LandingPageFormField'][];
const consentOf = (c: StoredConsent) => c as unknown as S['LandingPageConsent'];
const themeOf = (t: StoredTheme) => t as unknown as S['LandingPageTheme'];

/** The public address of a page: served by src/http/landing-pages.ts. */
const publicPageUrl = (baseUrl: string, organizationId: string, slug: string): string => `${baseUrl}/p/${organizationId}/${slug}`;
const templatePreviewUrl = (baseUrl: string, previewName: string): string => `${baseUrl}/p/-/templates/${previewName}.png`;

export function toTemplate(t: CatalogTemplate, baseUrl: string): S['LandingPageTemplate'] {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    category: t.category,
    previewUrl: templatePreviewUrl(baseUrl, t.previewName),
    defaults: {
      ...t.defaults,
      formFields: fields(t.defaults.formFields),
      consent: consentOf(t.defaults.consent),
      theme: themeOf(t.defaults.theme),
    },
  };
}

export function toLandingPage(row: LandingPageView, baseUrl: string): S['LandingPage'] {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    status: row.status,
    templateId: row.template_id,
    title: row.title,
    headline: row.headline,
    body: row.body,
    heroAssetId: row.hero_asset_id,
    formFields: fields(row.form_fields),
    consent: consentOf(row.consent),
    submitLabel: row.submit_label,
    successMessage: row.success_message,
    redirectUrl: row.redirect_url,
    tagIds: row.tag_ids,
    theme: themeOf(row.theme),
    acquisitionCampaignId: row.acquisition_campaign_id,
    url: row.status === 'PUBLISHED' ? publicPageUrl(baseUrl, row.organization_id, row.slug) : null,
    submissionCount: row.submission_count,
    publishedAt: row.published_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toSubmission(row: LandingPageSubmissionRow): S['LandingPageSubmission'] {
  return {
    id: row.id,
    landingPageId: row.landing_page_id,
    fields: row.fields,
    phone: row.phone,
    contactId: row.contact_id,
    contactAction: row.contact_action,
    consent: {
      granted: row.consent_given,
      messageType: row.consent_message_type,
      text: row.consent_text,
      ipAddress: row.ip,
      userAgent: row.user_agent,
    },
    createdAt: row.created_at.toISOString(),
  };
}
