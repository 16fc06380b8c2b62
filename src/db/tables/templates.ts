// Templates section tables (migration 0053).
import type { Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp } from './columns.ts';

export type ChatAppTemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED';
type ChatAppTemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';

/** One part of a template as registered (the document's ChatAppTemplateComponent). */
export type StoredTemplateComponent = {
  type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
  format?: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT' | 'LOCATION';
  text?: string;
  buttons?: Array<{ type: 'QUICK_REPLY' | 'URL' | 'PHONE_NUMBER' | 'COPY_CODE'; text: string; url?: string; phoneNumber?: string }>;
};

/** A placeholder's example value as submitted for review (the document's ChatAppTemplateVariable). */
type StoredTemplateVariable = { component: 'HEADER' | 'BODY' | 'BUTTONS'; index: number; example: string };

/** A chat-app template registered for one CHATAPP_BUSINESS sender, and its review at the sender's provider. */
export interface ChatAppTemplatesTable {
  id: Generated<string>;
  organization_id: string;
  sender_id: string;
  name: string;
  language: string;
  category: ChatAppTemplateCategory;
  status: ChatAppTemplateStatus;
  components: Json<StoredTemplateComponent[]>;
  variables: Json<StoredTemplateVariable[]>;
  /** The provider's id of the submission; never shown to API clients. */
  provider_template_id: string | null;
  rejection_reason: string | null;
  approved_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface TemplatesTables {
  chatapp_templates: ChatAppTemplatesTable;
}
