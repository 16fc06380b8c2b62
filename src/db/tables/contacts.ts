// Contacts section tables. The core (contacts, tags, contact_tags) is shared with Compliance and messaging.
import type { Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';

export type AttributeValue = string | number | boolean | null;

export interface ContactsTable {
  id: Generated<string>;
  organization_id: string;
  name: string | null;
  /** E.164, unique per organization. */
  phone: string;
  /** ISO 3166-1 alpha-2 region of the number (from libphonenumber), for time-zone inference. */
  phone_country: string | null;
  attributes: Json<Record<string, AttributeValue>>;
  /** Last known RCS capability: null = never checked. */
  rcs_capable: boolean | null;
  rcs_checked_at: Date | null;
  /** TCPA settings (PATCH /v1/contacts/{id}/tcpa). time_zone null = inferred from the number. */
  time_zone: string | null;
  quiet_hours_start: string | null;
  quiet_hours_end: string | null;
  consent_type: Generated<string>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface TagsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  created_at: CreatedAt;
}

export interface ContactTagsTable {
  organization_id: string;
  contact_id: string;
  tag_id: string;
  created_at: CreatedAt;
}

export interface ContactsTables {
  contacts: ContactsTable;
  tags: TagsTable;
  contact_tags: ContactTagsTable;
}
