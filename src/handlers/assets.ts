// Common section (openapi/paths/common.yaml), assets and asset folders: see README "Adding an operation".
import { defineHandlers } from '../http/handler-types.ts';

export const assetHandlers = defineHandlers({});
