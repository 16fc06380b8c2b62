// Submissions section: stored rows → the document's shapes (openapi/schemas/submissions.yaml).
import type { components } from '../../../generated/api.d.ts';
import type { BrandRow, CampaignRow, SubmissionRow } from '../../db/queries/submissions/registrations.ts';

type S = components['schemas'];
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toSubmission(r: SubmissionRow): S['SenderSubmission'] {
  return {
    id: r.id,
    senderId: r.sender_id,
    kind: r.kind,
    status: r.status,
    rejectionReasons: r.rejection_reasons,
    error: r.error,
    submittedAt: iso(r.submitted_at),
    decidedAt: iso(r.decided_at),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export function toBrand(r: BrandRow): S['SenderBrandRegistration'] {
  return {
    id: r.id,
    senderId: r.sender_id,
    status: r.status,
    identityStatus: r.identity_status as S['SenderBrandIdentityStatus'],
    entityType: r.entity_type,
    displayName: r.display_name,
    companyName: r.company_name,
    country: r.country,
    vertical: r.vertical,
    registryBrandId: r.registry_brand_id,
    vettingScore: r.vetting_score,
    rejectionReasons: r.rejection_reasons,
    submittedAt: r.submitted_at.toISOString(),
    registeredAt: iso(r.registered_at),
    updatedAt: r.updated_at.toISOString(),
  };
}

export function toCampaign(r: CampaignRow): S['SenderCampaignRegistration'] {
  return {
    id: r.id,
    senderId: r.sender_id,
    brandRegistrationId: r.brand_registration_id,
    status: r.status,
    useCase: r.use_case,
    subUseCases: r.sub_use_cases,
    description: r.description,
    registryCampaignId: r.registry_campaign_id,
    carrierStatuses: r.carrier_statuses,
    rejectionReasons: r.rejection_reasons,
    monthlyFee: r.monthly_fee === null ? null : { amount: Number(r.monthly_fee).toFixed(2), currency: 'USD' },
    submittedAt: r.submitted_at.toISOString(),
    registeredAt: iso(r.registered_at),
    expiresAt: iso(r.expires_at),
    updatedAt: r.updated_at.toISOString(),
  };
}
