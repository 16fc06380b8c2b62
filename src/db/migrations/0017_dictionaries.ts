// Dictionaries section: folders (dictionary_categories), intents (postback tokens) and variable definitions
// (capture tokens). Tokens are stored normalized (trimmed, lower case) and unique per organization; every row also
// has a stable uuid that never changes, not even through a rewrite (rename), so that bot flows (bots section,
// later) reference entries by (organization_id, id) with a composite foreign key — `unique (organization_id, id)`
// below is there for that — and a rename can never leave a flow pointing at nothing.
//
// Folder links are composite foreign keys too (an entry can only be filed in a folder of its own organization).
// They have no ON DELETE action: deleting a folder unfiles its entries first, in the same transaction (service).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dictionary_categories (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 100 and name = btrim(name)),
      sort_order integer not null check (sort_order >= 0),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint dictionary_categories_org_id_key unique (organization_id, id)
    )`.execute(db);
  await sql`create unique index dictionary_categories_org_name_key on dictionary_categories (organization_id, lower(name))`.execute(db);

  await sql`
    create table intents (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      value text not null check (length(value) between 1 and 100 and value = lower(btrim(value))),
      label text not null check (length(label) between 1 and 100),
      description text check (length(description) <= 1000),
      category_id uuid,
      active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint intents_org_value_key unique (organization_id, value),
      constraint intents_org_id_key unique (organization_id, id),
      constraint intents_category_fkey foreign key (organization_id, category_id) references dictionary_categories (organization_id, id)
    )`.execute(db);
  await sql`create index intents_org_category_idx on intents (organization_id, category_id) where category_id is not null`.execute(db);

  await sql`
    create table variable_definitions (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      name text not null check (length(name) between 1 and 64 and name ~ '^[a-z0-9_][a-z0-9_.-]*$'),
      type text not null check (type in ('text', 'number', 'date', 'boolean', 'email', 'phone', 'list')),
      items jsonb,
      category_id uuid,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint variable_definitions_items_check check ((type = 'list') = (items is not null)),
      constraint variable_definitions_org_name_key unique (organization_id, name),
      constraint variable_definitions_org_id_key unique (organization_id, id),
      constraint variable_definitions_category_fkey foreign key (organization_id, category_id) references dictionary_categories (organization_id, id)
    )`.execute(db);
  await sql`create index variable_definitions_org_category_idx on variable_definitions (organization_id, category_id) where category_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists variable_definitions`.execute(db);
  await sql`drop table if exists intents`.execute(db);
  await sql`drop table if exists dictionary_categories`.execute(db);
}
