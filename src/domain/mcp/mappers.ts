// MCP section: stored rows → the document's shapes. The sealed credentials never leave the row.
import type { components } from '../../../generated/api.d.ts';
import type { McpConfigRow, TestOutcome } from './config.ts';

type McpConfig = components['schemas']['McpConfig'];
type McpTestResponse = components['schemas']['McpTestResponse'];

export function toMcpConfig(row: McpConfigRow): McpConfig {
  return {
    baseUrl: row.base_url,
    credentialsSet: true,
    credentialsType: row.credentials_type,
    credentialsHint: row.credentials_hint,
    health: row.health.map((h) => ({
      channelType: h.channelType,
      status: h.status,
      latencyMs: h.latencyMs,
      error: h.error,
      checkedAt: h.checkedAt,
    })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toMcpTest(outcome: TestOutcome): McpTestResponse {
  return { data: { success: outcome.success, results: outcome.results, testedAt: outcome.testedAt.toISOString() } };
}
