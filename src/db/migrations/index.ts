// Explicit migration registry: every migration is imported and named here, never found by a directory scan.
// Kysely's Migrator (0.29) runs them in the order of their names (it sorts the keys of this object), not in the
// order written here, and refuses to start when a name sorts before one already run. So a new migration takes the
// next free number, and this list is kept in name order so that reading it tells the order they run in
// (test/migrations-registry.test.ts checks that, and that every file of this folder is registered).
// The Migrator holds a PostgreSQL advisory lock while it runs, so concurrent starts are safe.
import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_organizations_and_api_keys.ts';
import * as m0002 from './0002_contacts_and_consent.ts';
import * as m0003 from './0003_contacts_jobs.ts';
import * as m0004 from './0004_compliance_rules.ts';
import * as m0005 from './0005_webhooks.ts';
import * as m0006 from './0006_messaging.ts';
import * as m0007 from './0007_message_report.ts';
import * as m0008 from './0008_webhook_secrets_sealed.ts';
import * as m0009 from './0009_saved_segments.ts';
import * as m0010 from './0010_fallback_reason_of_unsent.ts';
import * as m0011 from './0011_sender_ids.ts';
import * as m0012 from './0012_sender_protocols.ts';
import * as m0013 from './0013_sender_numbers.ts';
import * as m0014 from './0014_mcp.ts';
import * as m0015 from './0015_submissions_programs.ts';
import * as m0016 from './0016_channels_rcs.ts';
import * as m0017 from './0017_dictionaries.ts';
import * as m0018 from './0018_assets.ts';
import * as m0019 from './0019_blasts.ts';
import * as m0020 from './0020_events.ts';
import * as m0021 from './0021_bots.ts';
import * as m0022 from './0022_analytics.ts';
import * as m0023 from './0023_landing_pages.ts';
import * as m0024 from './0024_analytics_exports.ts';
import * as m0025 from './0025_dispatch_outbox.ts';
import * as m0027 from './0027_bot_node_visits.ts';
import * as m0028 from './0028_analytics_sessions_daily.ts';
import * as m0029 from './0029_bulk_writes.ts';
import * as m0030 from './0030_report_send_retries.ts';
import * as m0033 from './0033_blast_write_path.ts';
import * as m0034 from './0034_contacts_import_throughput.ts';
import * as m0035 from './0035_plans_that_do_not_guess.ts';
import * as m0036 from './0036_outbox_without_its_own_index.ts';
import * as m0037 from './0037_webhook_endpoint_delete_by_index.ts';
import * as m0038 from './0038_messages_ignore_quiet_hours.ts';
import * as m0039 from './0039_webhook_attempts_endpoint_key_by_organization.ts';
import * as m0040 from './0040_conversation_previews_within_bound.ts';
import * as m0041 from './0041_messages_without_quiet_hours_exemption.ts';
import * as m0042 from './0042_acquisition_confirmed_opt_in.ts';
import * as m0043 from './0043_bot_inbound_triggers.ts';
import * as m0044 from './0044_message_attribution.ts';
import * as m0045 from './0045_registry_references.ts';
import * as m0046 from './0046_archived_programs_release_their_sender.ts';
import * as m0047 from './0047_rcs_agent_address_unique.ts';
import * as m0048 from './0048_tracked_links.ts';
import * as m0049 from './0049_message_carrier.ts';
import * as m0050 from './0050_message_origin_ids.ts';
import * as m0051 from './0051_message_fallback_sender.ts';
import * as m0052 from './0052_pass_through_charges.ts';
import * as m0053 from './0053_chatapp_templates.ts';
import * as m0054 from './0054_blast_audience_by_slice.ts';

export const migrations: Record<string, Migration> = {
  '0001_organizations_and_api_keys': m0001,
  '0002_contacts_and_consent': m0002,
  '0003_contacts_jobs': m0003,
  '0004_compliance_rules': m0004,
  '0005_webhooks': m0005,
  '0006_messaging': m0006,
  '0007_message_report': m0007,
  '0008_webhook_secrets_sealed': m0008,
  '0009_saved_segments': m0009,
  '0010_fallback_reason_of_unsent': m0010,
  '0011_sender_ids': m0011,
  '0012_sender_protocols': m0012,
  '0013_sender_numbers': m0013,
  '0014_mcp': m0014,
  '0015_submissions_programs': m0015,
  '0016_channels_rcs': m0016,
  '0017_dictionaries': m0017,
  '0018_assets': m0018,
  '0019_blasts': m0019,
  '0020_events': m0020,
  '0021_bots': m0021,
  '0022_analytics': m0022,
  '0023_landing_pages': m0023,
  '0024_analytics_exports': m0024,
  '0025_dispatch_outbox': m0025,
  '0027_bot_node_visits': m0027,
  '0028_analytics_sessions_daily': m0028,
  '0029_bulk_writes': m0029,
  '0030_report_send_retries': m0030,
  '0033_blast_write_path': m0033,
  '0034_contacts_import_throughput': m0034,
  '0035_plans_that_do_not_guess': m0035,
  '0036_outbox_without_its_own_index': m0036,
  '0037_webhook_endpoint_delete_by_index': m0037,
  '0038_messages_ignore_quiet_hours': m0038,
  '0039_webhook_attempts_endpoint_key_by_organization': m0039,
  '0040_conversation_previews_within_bound': m0040,
  '0041_messages_without_quiet_hours_exemption': m0041,
  '0042_acquisition_confirmed_opt_in': m0042,
  '0043_bot_inbound_triggers': m0043,
  '0044_message_attribution': m0044,
  '0045_registry_references': m0045,
  '0046_archived_programs_release_their_sender': m0046,
  '0047_rcs_agent_address_unique': m0047,
  '0048_tracked_links': m0048,
  '0049_message_carrier': m0049,
  '0050_message_origin_ids': m0050,
  '0051_message_fallback_sender': m0051,
  '0052_pass_through_charges': m0052,
  '0053_chatapp_templates': m0053,
  '0054_blast_audience_by_slice': m0054,
};
