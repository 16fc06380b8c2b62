// Messaging tables: conversations, messages (both directions) and Idempotency-Key records.
import type { Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';
import type {
  Channel,
  ConversationHandledBy,
  ConversationSourceType,
  ConversationStatus,
  Direction,
  FallbackReason,
  MessageEncoding,
  MessageStatus,
  MessageType,
} from './enums.ts';

/** How a message entered the system (internal: the contract does not show it). */
export type MessageOrigin = 'api' | 'conversation' | 'keyword_reply' | 'blast' | 'bot' | 'event' | 'inbound';

export interface ConversationsTable {
  id: Generated<string>;
  organization_id: string;
  contact_id: string;
  sender_id: string;
  status: Generated<ConversationStatus>;
  /** While human, bots do not reply. */
  handled_by: Generated<ConversationHandledBy>;
  bot_id: string | null;
  /** How it started. */
  source_type: ConversationSourceType;
  source_blast_id: string | null;
  source_bot_id: string | null;
  source_campaign_id: string | null;
  first_message_id: string | null;
  last_message_at: Date | null;
  last_message_preview: string | null;
  last_inbound_at: Date | null;
  last_outbound_at: Date | null;
  /** Channel of the last inbound message: it opens the RCS/chat-app session window. */
  session_channel: Channel | null;
  /** Start of the current (or last) 24-hour session window. */
  session_started_at: Date | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface MessagesTable {
  id: Generated<string>;
  organization_id: string;
  conversation_id: string;
  contact_id: string;
  contact_phone: string;
  sender_id: string;
  direction: Direction;
  requested_channel: Channel | null;
  /** Channel chosen at send time (may change if RCS fails and fallback is allowed). */
  planned_channel: Channel | null;
  /** Channel that actually carried it, from the receipt (or at once for inbound). */
  channel: Channel | null;
  fallback_used: Generated<boolean>;
  fallback_reason: FallbackReason;
  fallback_allowed: Generated<boolean>;
  /**
   * The sender that carries the SMS/MMS fallback when not this message's own (an RCS agent's fallback sender, chosen
   * at acceptance); null when it falls back on its own sender, has no fallback, or has moved (migration 0051).
   */
  fallback_sender_id: Generated<string | null>;
  message_type: MessageType | null;
  status: MessageStatus;
  content: Json<Record<string, unknown>>;
  segments: number;
  encoding: MessageEncoding;
  /** Price in 1/10,000 USD (see src/domain/messaging/pricing.ts); null until charged, null for inbound. */
  cost_units: number | null;
  estimated_cost_units: number | null;
  error_code: string | null;
  error_message: string | null;
  held_until: Date | null;
  /** Internal: which provider carried it and its id there. Never exposed through the API. */
  provider: string | null;
  provider_message_id: string | null;
  /** An inbound message's `provider provider_message_id`, unique (migration 0057): a repeated callback stores nothing. */
  inbound_key: string | null;
  origin: MessageOrigin;
  /** The blast this message was sent for (migration 0043). */
  blast_id: Generated<string | null>;
  /**
   * The sender's program and its brand and campaign registrations when the message was stored (sender_attribution,
   * migration 0059): written by the acceptance statement for an outbound message, by the messages_attribute trigger
   * for an inbound one; never rewritten by later program changes.
   */
  program_id: Generated<string | null>;
  brand_registration_id: Generated<string | null>;
  campaign_registration_id: Generated<string | null>;
  /** The network the recipient's number was originally allocated to, set at acceptance (migration 0049). */
  carrier: Generated<string | null>;
  /** Origin ids besides the blast (migration 0050): the bot that sent it, the event trigger that started that bot, the acquisition campaign. */
  bot_id: Generated<string | null>;
  event_trigger_id: Generated<string | null>;
  acquisition_campaign_id: Generated<string | null>;
  attempts: Generated<number>;
  /** Dispatch outbox: when a dispatch worker may claim the message next; null once settled (migration 0025). */
  dispatch_at: Date | null;
  created_at: CreatedAt;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  failed_at: Date | null;
  revoked_at: Date | null;
  receipt_at: Date | null;
  updated_at: TimestampDefault;
}

interface IdempotencyKeysTable {
  organization_id: string;
  key: string;
  operation_id: string;
  /** SHA-256 of the canonical request body: the same key with another body is refused (409). */
  request_hash: string;
  response_status: number;
  response_body: Json<unknown>;
  created_at: CreatedAt;
}

interface ServiceSettingsTable {
  key: string;
  value: string;
}

/** The carrier simulator's log: what reached the (simulated) handset. */
interface SimulatorMessagesTable {
  provider_message_id: string;
  organization_id: string;
  provider: string;
  dedupe_key: string;
  from_address: string;
  to_phone: string;
  channel: string;
  body: string | null;
  send_calls: Generated<number>;
  revoked: Generated<boolean>;
  accepted_at: CreatedAt;
  /** When the simulator reported the message's final status (migration 0066): a revoke is too late from then. */
  reported_at: Date | null;
}

/** Tracked links (migration 0048): a code of a message's rewritten URL, its original URL and its clicks. */
interface MessageLinksTable {
  code: string;
  organization_id: string;
  message_id: string;
  contact_id: string;
  blast_id: string | null;
  url: string;
  clicks: Generated<number>;
  first_clicked_at: Date | null;
  last_clicked_at: Date | null;
  created_at: CreatedAt;
}

export interface MessagingTables {
  conversations: ConversationsTable;
  messages: MessagesTable;
  idempotency_keys: IdempotencyKeysTable;
  service_settings: ServiceSettingsTable;
  simulator_messages: SimulatorMessagesTable;
  message_links: MessageLinksTable;
}
