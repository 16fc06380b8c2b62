// Every operation's handler, keyed by operationId, one module per section (the Sender IDs section is split by
// subject: sender-ids, -numbers, -protocols, -channels; Events has its public enrollment in events-public.ts).
// An operation without a handler must be listed in not-implemented.ts (it then answers 501); src/http/api.ts
// refuses to start if this map, that list and the document disagree.
import type { HandlerMap } from '../http/handler-types.ts';
import { analyticsHandlers } from './analytics.ts';
import { apiKeyHandlers } from './api-keys.ts';
import { complianceHandlers } from './compliance.ts';
import { contactHandlers } from './contacts.ts';
import { conversationHandlers } from './conversations.ts';
import { healthHandlers } from './health.ts';
import { mcpHandlers } from './mcp.ts';
import { webhookHandlers } from './webhooks.ts';
import { senderIdsHandlers } from './sender-ids.ts';
import { senderIdProtocolsHandlers } from './sender-id-protocols.ts';
import { senderIdNumbersHandlers } from './sender-id-numbers.ts';
import { submissionHandlers } from './submissions.ts';
import { programHandlers } from './programs.ts';
import { senderIdChannelsHandlers } from './sender-id-channels.ts';
import { dictionaryHandlers } from './dictionaries.ts';
import { assetHandlers } from './assets.ts';
import { blastHandlers } from './blasts.ts';
import { eventHandlers } from './events.ts';
import { publicEventHandlers } from './events-public.ts';
import { botHandlers } from './bots.ts';
import { templateHandlers } from './templates.ts';
import { landingPageHandlers } from './landing-pages.ts';

export const handlers: HandlerMap = {
  ...healthHandlers,
  ...apiKeyHandlers,
  ...contactHandlers,
  ...complianceHandlers,
  ...webhookHandlers,
  ...conversationHandlers,
  ...analyticsHandlers,
  ...mcpHandlers,
  ...senderIdsHandlers,
  ...senderIdProtocolsHandlers,
  ...senderIdNumbersHandlers,
  ...senderIdChannelsHandlers,
  ...submissionHandlers,
  ...programHandlers,
  ...dictionaryHandlers,
  ...assetHandlers,
  ...blastHandlers,
  ...eventHandlers,
  ...publicEventHandlers,
  ...botHandlers,
  ...templateHandlers,
  ...landingPageHandlers,
};
