// Events section (openapi/paths/events.yaml), the one public operation (`security: []`): public acquisition
// enrollment. See README "Adding an operation" (public handlers get the system context, no tenant).
import { enrollPublic } from '../domain/acquisition/public-enroll.ts';
import { clientOf } from '../domain/acquisition/client.ts';
import { toPublicEnrollResult } from '../domain/events/mappers.ts';
import { definePublicHandlers } from '../http/handler-types.ts';

export const publicEventHandlers = definePublicHandlers({
  async enrollPublicAcquisitionContact({ path, body, headers }, { app }) {
    const result = await enrollPublic(app, path.campaignId, body, clientOf(headers as Record<string, string | string[] | undefined>));
    return { status: 200, body: { data: toPublicEnrollResult(result) }, headers: { 'Access-Control-Allow-Origin': '*' } };
  },
});
