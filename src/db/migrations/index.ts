// Explicit migration registry: every migration is named here with its import, never found by a directory scan. A
// migration's module is imported only when the Migrator runs (src/db/database.ts): a start whose database has run
// every migration loads none of them, nor what a migration needs (0049's carrier table, say; issue 38).
// Kysely's Migrator (0.29) runs them in the order of their names (it sorts the keys of this object), not in the
// order written here, and refuses to start when a name sorts before one already run. So a new migration takes the
// next free number, and this list is kept in name order so that reading it tells the order they run in
// (test/migrations-registry.test.ts checks that, and that every file of this folder is registered).
// The Migrator holds a PostgreSQL advisory lock while it runs, so concurrent starts are safe.
import type { Migration } from 'kysely/migration';

export const migrations: Record<string, () => Promise<Migration>> = {
  '0001_organizations_and_api_keys': () => import('./0001_organizations_and_api_keys.ts'),
  '0002_contacts_and_consent': () => import('./0002_contacts_and_consent.ts'),
  '0003_contacts_jobs': () => import('./0003_contacts_jobs.ts'),
  '0004_compliance_rules': () => import('./0004_compliance_rules.ts'),
  '0005_webhooks': () => import('./0005_webhooks.ts'),
  '0006_messaging': () => import('./0006_messaging.ts'),
  '0007_message_report': () => import('./0007_message_report.ts'),
  '0008_webhook_secrets_sealed': () => import('./0008_webhook_secrets_sealed.ts'),
  '0009_saved_segments': () => import('./0009_saved_segments.ts'),
  '0010_fallback_reason_of_unsent': () => import('./0010_fallback_reason_of_unsent.ts'),
  '0011_sender_ids': () => import('./0011_sender_ids.ts'),
  '0012_sender_protocols': () => import('./0012_sender_protocols.ts'),
  '0013_sender_numbers': () => import('./0013_sender_numbers.ts'),
  '0014_mcp': () => import('./0014_mcp.ts'),
  '0015_submissions_programs': () => import('./0015_submissions_programs.ts'),
  '0016_channels_rcs': () => import('./0016_channels_rcs.ts'),
  '0017_dictionaries': () => import('./0017_dictionaries.ts'),
  '0018_assets': () => import('./0018_assets.ts'),
  '0019_blasts': () => import('./0019_blasts.ts'),
  '0020_events': () => import('./0020_events.ts'),
  '0021_bots': () => import('./0021_bots.ts'),
  '0022_analytics': () => import('./0022_analytics.ts'),
  '0023_landing_pages': () => import('./0023_landing_pages.ts'),
  '0024_analytics_exports': () => import('./0024_analytics_exports.ts'),
  '0025_dispatch_outbox': () => import('./0025_dispatch_outbox.ts'),
  '0027_bot_node_visits': () => import('./0027_bot_node_visits.ts'),
  '0028_analytics_sessions_daily': () => import('./0028_analytics_sessions_daily.ts'),
  '0029_bulk_writes': () => import('./0029_bulk_writes.ts'),
  '0030_report_send_retries': () => import('./0030_report_send_retries.ts'),
  '0033_blast_write_path': () => import('./0033_blast_write_path.ts'),
  '0034_contacts_import_throughput': () => import('./0034_contacts_import_throughput.ts'),
  '0035_plans_that_do_not_guess': () => import('./0035_plans_that_do_not_guess.ts'),
  '0036_outbox_without_its_own_index': () => import('./0036_outbox_without_its_own_index.ts'),
  '0037_webhook_endpoint_delete_by_index': () => import('./0037_webhook_endpoint_delete_by_index.ts'),
  '0038_messages_ignore_quiet_hours': () => import('./0038_messages_ignore_quiet_hours.ts'),
  '0039_webhook_attempts_endpoint_key_by_organization': () => import('./0039_webhook_attempts_endpoint_key_by_organization.ts'),
  '0040_conversation_previews_within_bound': () => import('./0040_conversation_previews_within_bound.ts'),
  '0041_messages_without_quiet_hours_exemption': () => import('./0041_messages_without_quiet_hours_exemption.ts'),
  '0042_acquisition_confirmed_opt_in': () => import('./0042_acquisition_confirmed_opt_in.ts'),
  '0043_bot_inbound_triggers': () => import('./0043_bot_inbound_triggers.ts'),
  '0044_message_attribution': () => import('./0044_message_attribution.ts'),
  '0045_registry_references': () => import('./0045_registry_references.ts'),
  '0046_archived_programs_release_their_sender': () => import('./0046_archived_programs_release_their_sender.ts'),
  '0047_rcs_agent_address_unique': () => import('./0047_rcs_agent_address_unique.ts'),
  '0048_tracked_links': () => import('./0048_tracked_links.ts'),
  '0049_message_carrier': () => import('./0049_message_carrier.ts'),
  '0050_message_origin_ids': () => import('./0050_message_origin_ids.ts'),
  '0051_message_fallback_sender': () => import('./0051_message_fallback_sender.ts'),
  '0052_pass_through_charges': () => import('./0052_pass_through_charges.ts'),
  '0053_chatapp_templates': () => import('./0053_chatapp_templates.ts'),
  '0054_blast_audience_by_slice': () => import('./0054_blast_audience_by_slice.ts'),
  '0055_message_status_writes_hot': () => import('./0055_message_status_writes_hot.ts'),
  '0056_carrier_prefix_lengths': () => import('./0056_carrier_prefix_lengths.ts'),
  '0057_inbound_message_key': () => import('./0057_inbound_message_key.ts'),
  '0059_message_attribution_per_statement': () => import('./0059_message_attribution_per_statement.ts'),
  '0060_contacts_import_indexes': () => import('./0060_contacts_import_indexes.ts'),
  '0065_contacts_rcs_created_known_only': () => import('./0065_contacts_rcs_created_known_only.ts'),
  '0066_simulator_reported': () => import('./0066_simulator_reported.ts'),
  '0067_registration_fees': () => import('./0067_registration_fees.ts'),
};

/** Every registered migration, imported: what Kysely's Migrator is given when it runs. */
export async function loadMigrations(): Promise<Record<string, Migration>> {
  return Object.fromEntries(await Promise.all(Object.entries(migrations).map(async ([name, load]) => [name, await load()] as const)));
}
