// The campaign's QR code (generateAcquisitionCampaignQr): made with `qrcode` from what only the campaign decides
// (its enrollment URL, or for a KEYWORD campaign an `sms:` URI to its short code pre-filled with the keyword), so a
// printed code stays valid however often it is generated again, in whatever format or size.
import * as q from '../../db/queries/acquisition/campaigns.ts';
import { inTransaction } from '../../db/database.ts';
import { ApiError } from '../errors.ts';
import type { Services, Tenant } from '../tenant.ts';
import { enrollmentUrlOf, loadCampaign } from './campaigns.ts';

export type CampaignQr = {
  campaignId: string;
  format: 'png' | 'svg';
  size: number;
  dataUrl: string;
  encodedValue: string;
  enrollmentUrl: string;
  generatedAt: Date;
};

export async function generateCampaignQr(
  tenant: Tenant,
  services: Services,
  id: string,
  opts: { format?: 'png' | 'svg'; size?: number },
  now = new Date(),
): Promise<CampaignQr> {
  const format = opts.format ?? 'png';
  const size = opts.size ?? 512;
  const { default: QRCode } = await import('qrcode'); // loaded on the first QR code, not at start-up (bench part a)
  return inTransaction(tenant.db, async (tx) => {
    const campaign = await loadCampaign({ ...tenant, db: tx as unknown as Tenant['db'] }, id, { forUpdate: true });
    if (campaign.status === 'ENDED') {
      throw new ApiError(409, 'INVALID_STATE', 'The campaign is ENDED: it has no QR code to print.', {
        details: [{ field: 'path.id', message: 'the campaign is ENDED', code: 'invalid_state' }],
      });
    }
    const enrollmentUrl = enrollmentUrlOf(services, campaign.id);
    const encodedValue =
      campaign.type === 'KEYWORD' && campaign.shortcode && campaign.keyword
        ? `sms:${campaign.shortcode}?body=${encodeURIComponent(campaign.keyword)}`
        : enrollmentUrl;
    const options = { errorCorrectionLevel: 'M' as const, margin: 2, width: size };
    const dataUrl =
      format === 'svg'
        ? `data:image/svg+xml;base64,${Buffer.from(await QRCode.toString(encodedValue, { ...options, type: 'svg' })).toString('base64')}`
        : await QRCode.toDataURL(encodedValue, { ...options, type: 'image/png' });
    await q.updateCampaign(tx, tenant.organizationId, id, { qr_code_generated_at: now });
    return { campaignId: campaign.id, format, size, dataUrl, encodedValue, enrollmentUrl, generatedAt: now };
  });
}
