// Sender IDs section (the sender-ids paths of openapi.yaml), numbers: see README "Adding an operation".
// searchSenderIdNumbers, purchaseSenderIdNumber, importSenderIdNumber, releaseSenderIdNumber, listSenderIdNumbers.
import * as numbers from '../domain/sender-ids/numbers.ts';
import { toAvailableNumber, toPendingSender, toSenderIdNumber } from '../domain/sender-ids/number-mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';
import { pageOf, paginated } from '../http/pagination.ts';

export const senderIdNumbersHandlers = defineHandlers({
  async searchSenderIdNumbers({ body }, { tenant, services }) {
    const rows = await numbers.searchNumbers(tenant, services, body);
    return { status: 200, body: { data: rows.map((r) => toAvailableNumber(r.row, r.proof)) } };
  },

  async purchaseSenderIdNumber({ body }, { tenant, services, idempotencyKey }) {
    const { sender, lease } = await numbers.purchaseNumber(tenant, services, body, idempotencyKey);
    return { status: 201, body: { data: { sender: toPendingSender(sender, lease), number: toSenderIdNumber(lease) } } };
  },

  async importSenderIdNumber({ body }, { tenant, services }) {
    const { sender, lease } = await numbers.importNumber(tenant, services, body);
    return { status: 201, body: { data: { sender: toPendingSender(sender, lease), number: toSenderIdNumber(lease) } } };
  },

  async releaseSenderIdNumber({ path }, { tenant, services }) {
    return { status: 200, body: { data: toSenderIdNumber(await numbers.releaseNumber(tenant, services, path.id)) } };
  },

  async listSenderIdNumbers({ query }, { tenant }) {
    const page = pageOf(query);
    const { rows, total } = await numbers.listNumbers(tenant, { provider: query.provider }, page);
    return { status: 200, body: paginated(rows.map(toSenderIdNumber), total, page) };
  },
});
