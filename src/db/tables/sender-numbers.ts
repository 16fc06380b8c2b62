// Sender numbers (Sender IDs section, numbers): leases and the simulator's assignments (migration 0013).
import type { Generated } from 'kysely';
import type { CreatedAt, Timestamp } from './columns.ts';
import type {
  SenderIdInventoryType,
  SenderIdNumberCapability,
  SenderIdNumberSource,
  SenderIdNumberStatus,
  SenderIdProvider,
} from './enums.ts';

export interface SenderNumbersTable {
  id: Generated<string>;
  organization_id: string;
  /** The sender this number backs; null only when a NEEDS_RECONCILIATION attempt left no sender. */
  sender_id: string | null;
  number: string;
  number_key: string | null;
  inventory_type: SenderIdInventoryType;
  provider: SenderIdProvider;
  source: SenderIdNumberSource;
  status: SenderIdNumberStatus;
  country_code: string;
  region: string | null;
  locality: string | null;
  capabilities: SenderIdNumberCapability[];
  /** numeric: a decimal string (USD); null for imported numbers. */
  monthly_cost: string | null;
  upstream_order_state: string | null;
  billing_started_at: Timestamp | null;
  created_at: CreatedAt;
  released_at: Timestamp | null;
}

interface SimulatorNumbersTable {
  number: string;
  provider: string;
  organization_id: string;
  order_key: string;
  state: string;
  created_at: CreatedAt;
}

export interface SenderNumbersTables {
  sender_numbers: SenderNumbersTable;
  simulator_numbers: SimulatorNumbersTable;
}
