// Events section (the events paths of openapi.yaml): event triggers and acquisition campaigns: see README "Adding an operation".
import { createCampaign, deleteCampaign, getCampaign, listCampaigns, updateCampaign } from '../domain/acquisition/campaigns.ts';
import { enrollContact } from '../domain/acquisition/enroll.ts';
import { generateCampaignQr } from '../domain/acquisition/qr-code.ts';
import { triggerEvent, triggerEventBatch } from '../domain/events/events.ts';
import {
  toAcquisitionCampaign,
  toAcquisitionCampaignDetail,
  toAcquisitionEnrollment,
  toEventBatchSummary,
  toEventResult,
} from '../domain/events/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { wholeOrPaged } from '../http/pagination.ts';

export const eventHandlers = defineHandlers({
  async triggerEvent({ body }, { tenant, services }) {
    return { status: 200, body: toEventResult(await triggerEvent(tenant, services, body)) };
  },

  async triggerEventBatch({ body }, { tenant, services }) {
    return { status: 200, body: { data: toEventBatchSummary(await triggerEventBatch(tenant, services, body.events)) } };
  },

  async enrollAcquisitionContact({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toAcquisitionEnrollment(await enrollContact(tenant, services, path.campaignId, body)) } };
  },

  async listAcquisitionCampaigns({ query }, { tenant, services }) {
    return { status: 200, body: wholeOrPaged((await listCampaigns(tenant, services, query)).map(toAcquisitionCampaign), query) };
  },

  async createAcquisitionCampaign({ body }, { tenant, services }) {
    return { status: 201, body: toAcquisitionCampaign(await createCampaign(tenant, services, body)) };
  },

  async getAcquisitionCampaign({ path }, { tenant, services }) {
    return { status: 200, body: toAcquisitionCampaignDetail(await getCampaign(tenant, services, path.campaignId)) };
  },

  async updateAcquisitionCampaign({ path, body }, { tenant, services }) {
    return { status: 200, body: toAcquisitionCampaign(await updateCampaign(tenant, services, path.campaignId, body)) };
  },

  async deleteAcquisitionCampaign({ path }, { tenant }) {
    await deleteCampaign(tenant, path.campaignId);
    // No content: the response validator checks a body-less answer as `null` (send() writes nothing for 204).
    return { status: 204, body: null as never };
  },

  async generateAcquisitionCampaignQr({ path, query }, { tenant, services }) {
    const qr = await generateCampaignQr(tenant, services, path.campaignId, { format: query.format, size: query.size });
    return { status: 200, body: { data: { ...qr, generatedAt: qr.generatedAt.toISOString() } } };
  },
});
