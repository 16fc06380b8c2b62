// Landing pages tables (migration 0023): pages and the submissions of their public form.
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';
import type { MessageType } from './enums.ts';

export type LandingPageState = 'DRAFT' | 'PUBLISHED' | 'UNPUBLISHED' | 'ARCHIVED';

export type StoredFormField = {
  key: string;
  label: string;
  type: 'text' | 'email' | 'phone' | 'number' | 'date' | 'select' | 'checkbox' | 'textarea';
  required: boolean;
  options: string[] | null;
  attributeKey: string | null;
};
export type StoredConsent = { text: string; required: boolean; messageType: 'MARKETING' | 'TRANSACTIONAL' | 'SERVICE' };
export type StoredTheme = { primaryColor: string; backgroundColor: string };

export interface LandingPagesTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  slug: string;
  status: ColumnType<LandingPageState, LandingPageState | undefined, LandingPageState>;
  template_id: string | null;
  acquisition_campaign_id: string | null;
  title: string;
  headline: string;
  body: string | null;
  hero_asset_id: string | null;
  form_fields: Json<StoredFormField[]>;
  consent: Json<StoredConsent>;
  submit_label: string;
  success_message: string;
  redirect_url: string | null;
  tag_ids: Json<string[]>;
  theme: Json<StoredTheme>;
  published_at: Date | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface LandingPageSubmissionsTable {
  id: Generated<string>;
  organization_id: string;
  landing_page_id: string;
  fields: Json<Record<string, string | number | boolean | null>>;
  phone: string;
  contact_id: string;
  contact_action: 'created' | 'linked';
  consent_given: boolean;
  consent_text: string;
  consent_message_type: MessageType;
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
}

export interface LandingPagesTables {
  landing_pages: LandingPagesTable;
  landing_page_submissions: LandingPageSubmissionsTable;
}
