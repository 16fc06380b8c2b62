// Assets section: asset folders (a tree per organization, names unique among siblings) and assets (metadata;
// the bytes live in the object store, src/lib/storage/). Deleting a folder with subfolders is refused by the
// foreign key (the service answers 409 first); assets of a deleted folder become unfiled.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table asset_folders (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references organizations (id) on delete cascade,
      parent_id uuid references asset_folders (id),
      name text not null check (length(name) between 1 and 100),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index asset_folders_sibling_name on asset_folders
    (organization_id, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name)`.execute(db);
  await sql`create index asset_folders_parent on asset_folders (parent_id)`.execute(db);

  await sql`
    create table assets (
      id uuid primary key,
      organization_id uuid not null references organizations (id) on delete cascade,
      folder_id uuid references asset_folders (id) on delete set null,
      source_asset_id uuid,
      type text not null check (type in ('image', 'gif', 'video', 'audio', 'pdf', 'vcard', 'other')),
      name text not null check (length(name) between 1 and 255),
      mime_type text not null,
      size_bytes integer not null check (size_bytes >= 0),
      width integer,
      height integer,
      status text not null default 'processing' check (status in ('processing', 'ready', 'error')),
      error text,
      storage_key text not null,
      etag text not null,
      variants jsonb not null default '[]',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index assets_org_created on assets (organization_id, created_at desc, id desc)`.execute(db);
  await sql`create index assets_folder on assets (folder_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists assets`.execute(db);
  await sql`drop table if exists asset_folders`.execute(db);
}
