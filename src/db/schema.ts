// Table types for Kysely, one file per section under tables/. Every table carries organization_id (the
// tenant wall); queries add it through src/db/tenant.ts.
import type { Selectable } from 'kysely';
import type { CoreTables, ApiKeysTable } from './tables/core.ts';
import type { ContactsTables } from './tables/contacts.ts';
import type { ComplianceTables } from './tables/compliance.ts';
import type { WebhooksTables } from './tables/webhooks.ts';
import type { MessagingTables } from './tables/messaging.ts';
import type { SenderNumbersTables } from './tables/sender-numbers.ts';
import type { McpTables } from './tables/mcp.ts';
import type { AssetsTables } from './tables/assets.ts';
import type { SenderIdsTables } from './tables/sender-ids.ts';
import type { SubmissionsTables } from './tables/submissions.ts';
import type { DictionariesTables } from './tables/dictionaries.ts';
import type { ChannelsTables } from './tables/channels.ts';
import type { BlastsTables } from './tables/blasts.ts';
import type { EventsTables } from './tables/events.ts';
import type { AnalyticsTables } from './tables/analytics.ts';
import type { BotsTables } from './tables/bots.ts';
import type { LandingPagesTables } from './tables/landing-pages.ts';
import type { BillingTables } from './tables/billing.ts';
import type { TemplatesTables } from './tables/templates.ts';

export interface Database
  extends CoreTables, ContactsTables, ComplianceTables, WebhooksTables, MessagingTables, SenderIdsTables, SenderNumbersTables {}

export interface Database extends McpTables {}

export interface Database extends AssetsTables {}

export interface Database extends SubmissionsTables {}

export interface Database extends DictionariesTables {}

export interface Database extends ChannelsTables {}

export interface Database extends BlastsTables {}

export interface Database extends EventsTables {}

export interface Database extends AnalyticsTables {}

export interface Database extends BotsTables {}

export interface Database extends LandingPagesTables {}

export interface Database extends BillingTables {}
export interface Database extends TemplatesTables {}

export type ApiKeyRow = Selectable<ApiKeysTable>;
