// Submissions section (the submissions paths of openapi.yaml): see README "Adding an operation".
// Each handler: typed input → one service call (src/domain/submissions/) → the mappers.
import { toBrand, toCampaign, toSubmission } from '../domain/submissions/mappers.ts';
import { refreshSenderIdStatus } from '../domain/submissions/refresh.ts';
import * as reg from '../domain/submissions/registrations.ts';
import { defineHandlers } from '../http/handler-types.ts';

export const submissionHandlers = defineHandlers({
  async launchSenderId({ path }, { tenant, services }) {
    const r = await reg.launchSenderId(tenant, services, path.id);
    return {
      status: 200,
      body: {
        data: {
          senderId: r.senderId,
          phase: 'LAUNCH_PENDING',
          previousPhase: r.previousPhase as 'TESTING',
          alreadyPending: r.alreadyPending,
          launchRequestedAt: r.launchRequestedAt.toISOString(),
        },
      },
    };
  },

  async submitSenderId({ path, body }, { tenant, services }) {
    const row = await reg.submitSenderId(tenant, services, path.id, body ?? {});
    return { status: 200, body: { data: { senderId: path.id, submission: toSubmission(row) } } };
  },

  async refreshSenderIdStatus({ path }, { tenant, services }) {
    const r = await refreshSenderIdStatus(tenant, services, path.id);
    return {
      status: 200,
      body: {
        data: {
          senderId: r.sender.id,
          senderStatus: r.sender.status,
          agentPhase: r.sender.type === 'RCS_AGENT' ? (r.sender.rcs_agent_phase ?? 'TESTING') : null,
          submission: r.submission && toSubmission(r.submission),
          brandStatus: r.brand?.status ?? null,
          campaignStatus: r.campaign?.status ?? null,
          changed: r.changed,
          refreshedAt: r.refreshedAt.toISOString(),
        },
      },
    };
  },

  async registerSenderBrand({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toBrand(await reg.registerBrand(tenant, services, path.id, body)) } };
  },

  async getSenderBrandStatus({ path }, { tenant }) {
    const row = await reg.getBrandStatus(tenant, path.id);
    return { status: 200, body: { data: row && toBrand(row) } };
  },

  async registerSenderCampaign({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: toCampaign(await reg.registerCampaign(tenant, services, path.id, body)) } };
  },

  async getSenderCampaignStatus({ path }, { tenant }) {
    const row = await reg.getCampaignStatus(tenant, path.id);
    return { status: 200, body: { data: row && toCampaign(row) } };
  },
});
