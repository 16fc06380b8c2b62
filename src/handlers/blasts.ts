// Blasts section (the blasts paths of openapi.yaml): thin handlers, one service call each (src/domain/blasts/), rows
// mapped by src/domain/blasts/mappers.ts.
import * as blasts from '../domain/blasts/blasts.ts';
import { toBlast, toDetail, toStats } from '../domain/blasts/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const blastHandlers = defineHandlers({
  async listBlasts({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await blasts.listBlasts(tenant, query.status, page);
    return { status: 200, body: paginated(rows.map(toBlast), total, page) };
  },

  async createBlast({ body }, { tenant, services }) {
    return { status: 201, body: toBlast(await blasts.createBlast(tenant, services, body)) };
  },

  async getBlast({ path }, { tenant }) {
    const { blast, progress } = await blasts.getBlastDetail(tenant, path.id);
    return { status: 200, body: toDetail(blast, progress) };
  },

  async updateBlast({ path, body }, { tenant, services }) {
    return { status: 200, body: toBlast(await blasts.updateBlast(tenant, services, path.id, body)) };
  },

  async deleteBlast({ path }, { tenant }) {
    await blasts.deleteBlast(tenant, path.id);
    return { status: 204, body: null as never };
  },

  async updateBlastContent({ path, body }, { tenant }) {
    return { status: 200, body: toBlast(await blasts.updateBlastContent(tenant, path.id, body)) };
  },

  async updateBlastAudience({ path, body }, { tenant }) {
    const { blast, recipientCount } = await blasts.updateBlastAudience(tenant, path.id, body);
    return {
      status: 200,
      body: {
        data: {
          blastId: blast.id,
          segmentId: blast.segment_id,
          contactIds: blast.contact_ids,
          recipientCount,
          updatedAt: blast.updated_at.toISOString(),
        },
      },
    };
  },

  async estimateBlast({ path }, { tenant }) {
    return { status: 200, body: { data: await blasts.estimateBlast(tenant, path.id) } };
  },

  async testBlast({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: await blasts.testBlast(tenant, services, path.id, body) } };
  },

  async launchBlast({ path }, { tenant, services }) {
    return { status: 200, body: { data: await blasts.launchBlast(tenant, services, path.id) } };
  },

  async getBlastProgress({ path }, { tenant }) {
    return { status: 200, body: { data: await blasts.getBlastProgress(tenant, path.id) } };
  },

  async sendBlast({ path }, { tenant, services }) {
    return { status: 200, body: { data: await blasts.sendBlast(tenant, services, path.id) } };
  },

  async scheduleBlast({ path, body }, { tenant, services }) {
    return { status: 200, body: { data: await blasts.scheduleBlast(tenant, services, path.id, body) } };
  },

  async cancelBlast({ path }, { tenant, services }) {
    return { status: 200, body: { data: await blasts.cancelBlast(tenant, services, path.id) } };
  },

  async getBlastStats({ path }, { tenant }) {
    const { blast, groups, engagement } = await blasts.getBlastStats(tenant, path.id);
    return { status: 200, body: toStats(blast, groups, engagement) };
  },
});
