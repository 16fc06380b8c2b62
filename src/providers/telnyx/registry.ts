// Telnyx's 10DLC registry (API v2, `messaging10dlc` of the official SDK): Telnyx is the campaign service provider
// that registers brands and campaigns with The Campaign Registry (TCR) and the carriers (MNOs) for this account.
//   - a brand: POST /v2/10dlc/brand (our registration mapped to TCR's fields, `taxId` → `ein`); its reference is
//     Telnyx's `brandId`; GET /v2/10dlc/brand/{brandId} reads the verdict: `status` OK (registered, with TCR's
//     `identityStatus` VERIFIED/UNVERIFIED/SELF_DECLARED/VETTED_VERIFIED and `tcrBrandId`), REGISTRATION_PENDING, or
//     REGISTRATION_FAILED (with Telnyx's `failureReasons`);
//   - a campaign: POST /v2/10dlc/campaignBuilder under the brand's `brandId` (samples as sample1…sample5, keywords as
//     TCR's comma-separated lists), then the sender's number is attached to it (POST /v2/10dlc/phone_number_campaigns),
//     so the number carries the campaign's traffic once the carriers provision it; GET /v2/10dlc/campaign/{campaignId}
//     reads `campaignStatus`: approved at MNO_PROVISIONED (the carriers accepted and provisioned it), refused at
//     TCR_FAILED, TELNYX_FAILED, MNO_REJECTED or MNO_PROVISIONING_FAILED (with `failureReasons`), pending otherwise;
//     once approved, TCR_SUSPENDED is a suspension and TCR_EXPIRED an expiry (standing).
// Telnyx's refusal of a registration it cannot take (a 4xx: a field TCR rejects) is final for that request; it is
// reported as the registry's failure (the API answers 502 with Telnyx's reason) and nothing is recorded. Brand
// vetting (`requestVetting`) is ordered in the Telnyx portal: it is not sent here, and no vetting score is reported.
// Toll-free verification, RCS launch and sender registration are not Telnyx 10DLC: the domain answers 422.
import type Telnyx from 'telnyx';
import {
  ProviderError,
  type ProviderRejection,
  type ProviderRegistry,
  type RegistryDecision,
  type RegistryKind,
  type RegistryReviewRequest,
  type RegistryStanding,
  type RegistrySubmission,
} from '../provider.ts';

/** How long between two reads of a review at Telnyx (TCR's brand check takes minutes, the carriers' review days). */
const DEFAULT_STEP_MS = 60_000;

const CAMPAIGN_APPROVED = new Set(['MNO_PROVISIONED']);
const CAMPAIGN_REFUSED = new Set([
  'TCR_FAILED',
  'TELNYX_FAILED',
  'MNO_REJECTED',
  'MNO_PROVISIONING_FAILED',
  'TCR_SUSPENDED',
  'TCR_EXPIRED',
]);

type Classify = (error: unknown) => ProviderError | ProviderRejection;

export class TelnyxRegistry implements ProviderRegistry {
  /** Vetting is ordered in the Telnyx portal, not through this registry. */
  readonly vetsBrands = false;
  readonly kinds: ReadonlySet<RegistryKind> = new Set<RegistryKind>(['BRAND', 'CAMPAIGN']);
  readonly stepMs: number;
  private readonly client: Telnyx;
  private readonly classify: Classify;

  constructor(opts: { client: Telnyx; classify: Classify; stepMs?: number | undefined }) {
    this.client = opts.client;
    this.classify = opts.classify;
    this.stepMs = opts.stepMs ?? DEFAULT_STEP_MS;
  }

  /** A Telnyx call whose every failure is the registry's (unreachable, or its refusal with Telnyx's reason). */
  private async ask<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const e = this.classify(error);
      if (e instanceof ProviderError) throw e;
      throw new ProviderError(`Telnyx refused the ${what}: ${e.message} (${e.code})`, { retryable: false, outage: false });
    }
  }

  async submit(submission: RegistrySubmission): Promise<{ reference: string | null }> {
    if (submission.kind === 'BRAND') {
      const brand = await this.ask('brand', () => this.client.messaging10dlc.brand.create(brandOf(submission.details)));
      if (!brand.brandId) throw new ProviderError('Telnyx registered the brand without a brandId', { outage: true });
      return { reference: brand.brandId };
    }
    if (!submission.brandReference) {
      throw new ProviderError('The brand was not registered with Telnyx (no brandId): register it again first.', {
        retryable: false,
        outage: false,
      });
    }
    const brandId = submission.brandReference;
    const campaign = await this.ask('campaign', () =>
      this.client.messaging10dlc.campaignBuilder.submit(campaignOf(brandId, submission.details)),
    );
    const campaignId = campaign.campaignId;
    if (!campaignId) throw new ProviderError('Telnyx registered the campaign without a campaignId', { outage: true });
    if (submission.senderNumber) {
      const phoneNumber = submission.senderNumber;
      await this.ask('number assignment', () => this.client.messaging10dlc.phoneNumberCampaigns.create({ phoneNumber, campaignId }));
    }
    return { reference: campaignId };
  }

  async review(request: RegistryReviewRequest): Promise<RegistryDecision> {
    const reference = referenceOf(request);
    if (request.kind === 'BRAND') {
      const brand = await this.ask('brand read', () => this.client.messaging10dlc.brand.retrieve(reference));
      if (brand.status === 'REGISTRATION_FAILED') return { outcome: 'rejected', reasons: reasonsOf(brand.failureReasons, 'brand') };
      if (brand.status !== 'OK') return { outcome: 'pending' };
      return {
        outcome: 'approved',
        registryId: brand.tcrBrandId ?? brand.brandId ?? reference,
        ...(brand.identityStatus ? { identityStatus: brand.identityStatus } : {}),
      };
    }
    const campaign = await this.ask('campaign read', () => this.client.messaging10dlc.campaign.retrieve(reference));
    const status = campaign.campaignStatus ?? '';
    if (CAMPAIGN_REFUSED.has(status)) return { outcome: 'rejected', reasons: reasonsOf(campaign.failureReasons, `campaign (${status})`) };
    if (!CAMPAIGN_APPROVED.has(status)) return { outcome: 'pending' };
    return { outcome: 'approved', registryId: campaign.tcrCampaignId ?? campaign.campaignId ?? reference };
  }

  async standing(request: RegistryReviewRequest & { suspended: boolean }): Promise<RegistryStanding> {
    const reference = referenceOf(request);
    if (request.kind === 'BRAND') {
      const brand = await this.ask('brand read', () => this.client.messaging10dlc.brand.retrieve(reference));
      return brand.status === 'OK' ? { standing: 'active' } : { standing: 'suspended', reasons: reasonsOf(brand.failureReasons, 'brand') };
    }
    const campaign = await this.ask('campaign read', () => this.client.messaging10dlc.campaign.retrieve(reference));
    if (campaign.campaignStatus === 'TCR_EXPIRED') return { standing: 'expired' };
    if (campaign.campaignStatus === 'TCR_SUSPENDED' || campaign.campaignStatus === 'MNO_REJECTED')
      return { standing: 'suspended', reasons: reasonsOf(campaign.failureReasons, `campaign (${campaign.campaignStatus})`) };
    return { standing: 'active' };
  }

  async ping(): Promise<void> {
    await this.ask('brand list', () => this.client.messaging10dlc.brand.list({ recordsPerPage: 1 }));
  }
}

function referenceOf(request: RegistryReviewRequest): string {
  if (!request.reference)
    throw new ProviderError(`The ${request.kind.toLowerCase()} has no Telnyx reference.`, { retryable: false, outage: false });
  return request.reference;
}

/** Telnyx's `failureReasons` (free text, sometimes a JSON list) as reasons; a generic one when it gives none. */
function reasonsOf(failureReasons: string | undefined, what: string): string[] {
  const text = failureReasons?.trim();
  if (!text) return [`Telnyx reports the ${what} as refused without a reason.`];
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) {
      const reasons = parsed.map((r) => (typeof r === 'string' ? r : ((r as { description?: string })?.description ?? JSON.stringify(r))));
      if (reasons.length) return reasons;
    }
  } catch {
    // Plain text.
  }
  return [text];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const list = (v: unknown): string | undefined => (Array.isArray(v) && v.length ? v.join(',') : undefined);

/** Our brand registration (RegisterSenderBrandBody) as TCR's brand through Telnyx. */
function brandOf(d: Record<string, unknown>): Telnyx.Messaging10dlc.BrandCreateParams {
  const body = {
    entityType: d.entityType as Telnyx.Messaging10dlc.EntityType,
    displayName: String(d.displayName),
    country: String(d.country),
    email: String(d.email),
    vertical: d.vertical as Telnyx.Messaging10dlc.Vertical,
    companyName: str(d.companyName),
    ein: str(d.taxId),
    firstName: str(d.firstName),
    lastName: str(d.lastName),
    mobilePhone: str(d.mobilePhone),
    phone: str(d.phone),
    street: str(d.street),
    city: str(d.city),
    state: str(d.state),
    postalCode: str(d.postalCode),
    website: str(d.website),
    stockSymbol: str(d.stockSymbol),
    stockExchange: str(d.stockExchange) as Telnyx.Messaging10dlc.StockExchange | undefined,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as unknown as Telnyx.Messaging10dlc.BrandCreateParams;
}

/** Our campaign registration (RegisterSenderCampaignBody) as Telnyx's campaign builder takes it. */
function campaignOf(brandId: string, d: Record<string, unknown>): Telnyx.Messaging10dlc.CampaignBuilderSubmitParams {
  const samples = Array.isArray(d.sampleMessages) ? (d.sampleMessages as string[]) : [];
  const flag = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  const body = {
    brandId,
    usecase: String(d.useCase),
    subUsecases: Array.isArray(d.subUseCases) && d.subUseCases.length ? (d.subUseCases as string[]) : undefined,
    description: String(d.description),
    messageFlow: str(d.messageFlow),
    ...Object.fromEntries(samples.slice(0, 5).map((s, i) => [`sample${i + 1}`, s])),
    optinKeywords: list(d.optInKeywords),
    optoutKeywords: list(d.optOutKeywords),
    helpKeywords: list(d.helpKeywords),
    optinMessage: str(d.optInMessage),
    optoutMessage: str(d.optOutMessage),
    helpMessage: str(d.helpMessage),
    embeddedLink: flag(d.embeddedLink),
    embeddedPhone: flag(d.embeddedPhone),
    numberPool: flag(d.numberPool),
    ageGated: flag(d.ageGated),
    directLending: flag(d.directLending),
    privacyPolicyLink: str(d.privacyPolicyUrl),
    termsAndConditionsLink: str(d.termsUrl),
    termsAndConditions: typeof d.termsUrl === 'string' ? true : undefined,
    // The service answers STOP and HELP itself and records opt-ins (src/domain/compliance).
    subscriberOptin: true,
    subscriberOptout: true,
    subscriberHelp: true,
  };
  return Object.fromEntries(
    Object.entries(body).filter(([, v]) => v !== undefined),
  ) as unknown as Telnyx.Messaging10dlc.CampaignBuilderSubmitParams;
}
