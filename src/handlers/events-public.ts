// Events section (the events paths of openapi.yaml), the one public operation (`security: []`): public acquisition
// enrollment. See README "Adding an operation" (public handlers get the system context, no tenant).
import { enrollPublic } from '../domain/acquisition/public-enroll.ts';
import { toPublicEnrollResult } from '../domain/events/mappers.ts';
import { definePublicHandlers } from '../http/handler-types.ts';

export const publicEventHandlers = definePublicHandlers({
  async enrollPublicAcquisitionContact({ path, body }, { app, client }) {
    const result = await enrollPublic(app, path.campaignId, body, client);
    return { status: 200, body: { data: toPublicEnrollResult(result) }, headers: { 'Access-Control-Allow-Origin': '*' } };
  },
});
