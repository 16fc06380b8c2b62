// Bots section tables: bots (flows and triggers as jsonb), revisions, testers.
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp, TimestampDefault } from './columns.ts';
import type { BotStatus, BotTesterInviteStatus, Channel } from './enums.ts';

export interface BotsTable {
  id: Generated<string>;
  organization_id: string;
  name: string;
  description: string | null;
  channel: Channel;
  sender_id: string | null;
  status: ColumnType<BotStatus, BotStatus | undefined, BotStatus>;
  version: ColumnType<number, number | undefined, number>;
  published_version: number | null;
  draft_flow: Json<unknown>;
  published_flow: Json<unknown> | null;
  triggers: ColumnType<unknown, unknown, unknown>;
  inbound_triggers: ColumnType<unknown, unknown, unknown>;
  default_for_sender: ColumnType<boolean, boolean | undefined, boolean>;
  published_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface BotRevisionsTable {
  id: Generated<string>;
  organization_id: string;
  bot_id: string;
  version: number;
  flow: Json<unknown>;
  created_at: CreatedAt;
  published_at: Timestamp | null;
}

export interface BotTestersTable {
  id: Generated<string>;
  organization_id: string;
  bot_id: string;
  contact_id: string;
  phone: string;
  rcs_invite_status: BotTesterInviteStatus;
  rcs_invite_sent_at: Timestamp | null;
  rcs_invite_error: string | null;
  created_at: CreatedAt;
}

export interface BotSessionsTable {
  id: Generated<string>;
  organization_id: string;
  bot_id: string;
  conversation_id: string;
  contact_id: string;
  flow: Json<unknown>;
  node_id: string | null;
  variables: Json<Record<string, string>>;
  status: ColumnType<string, string | undefined, string>;
  last_inbound_message_id: string | null;
  /** Replies in a row that matched no edge at `node_id` (reset when the session advances). */
  misses: ColumnType<number, number | undefined, number>;
  /** The bot's published version when the session started (null for sessions older than migration 0027). */
  bot_version: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

/** One entry of a session into a node (migration 0027): how it left it (`exit`, null while waiting there). */
interface BotNodeVisitsTable {
  id: Generated<string>;
  organization_id: string;
  bot_id: string;
  bot_version: number | null;
  session_id: string;
  conversation_id: string;
  contact_id: string;
  session_started_at: Timestamp;
  node_id: string;
  node_type: string;
  entered_at: TimestampDefault;
  left_at: Timestamp | null;
  exit: string | null;
  next_node_id: string | null;
  latest: ColumnType<boolean, boolean | undefined, boolean>;
}

interface BotTriggerFiresTable {
  organization_id: string;
  bot_id: string;
  trigger_id: string;
  contact_id: string;
  fired_at: Timestamp;
}

export interface BotsTables {
  bot_sessions: BotSessionsTable;
  bot_node_visits: BotNodeVisitsTable;
  bot_trigger_fires: BotTriggerFiresTable;
  bots: BotsTable;
  bot_revisions: BotRevisionsTable;
  bot_testers: BotTestersTable;
}
