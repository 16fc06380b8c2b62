// Programs section (the programs paths of openapi.yaml): see README "Adding an operation".
// Each handler: typed input → one service call (src/domain/programs/programs.ts) → the mappers.
import { toAttachment, toProgram, toProgramStatus } from '../domain/programs/mappers.ts';
import * as programs from '../domain/programs/programs.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const programHandlers = defineHandlers({
  async listPrograms({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await programs.listPrograms(tenant, { status: query.status }, page);
    return { status: 200, body: paginated(rows.map(toProgram), total, page) };
  },

  async getProgram({ path }, { tenant }) {
    return { status: 200, body: { data: toProgram(await programs.getProgram(tenant, path.id)) } };
  },

  async getProgramStatus({ path }, { tenant }) {
    return { status: 200, body: { data: toProgramStatus(await programs.getProgram(tenant, path.id)) } };
  },

  async attachProgramSender({ path, body }, { tenant, services }) {
    return { status: 201, body: { data: toAttachment(await programs.attachSender(tenant, services, path.id, body)) } };
  },

  async archiveProgram({ path }, { tenant }) {
    return { status: 200, body: { data: toProgram(await programs.archiveProgram(tenant, path.id)) } };
  },

  async detachProgramSender({ path }, { tenant }) {
    return { status: 200, body: { data: toAttachment(await programs.detachSender(tenant, path.id, path.senderId)) } };
  },
});
