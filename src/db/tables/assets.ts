// Assets section tables: asset folders (a tree) and assets (metadata; bytes in the object store).
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, TimestampDefault } from './columns.ts';

export type AssetKind = 'image' | 'gif' | 'video' | 'audio' | 'pdf' | 'vcard' | 'other';
export type AssetState = 'processing' | 'ready' | 'error';

/** A processed rendition as stored: where its bytes are and what they are. */
export type StoredVariant = {
  name: string;
  mimeType: string;
  width: number | null;
  height: number | null;
  sizeBytes: number;
  key: string;
  etag: string;
};

export interface AssetFoldersTable {
  id: Generated<string>;
  organization_id: string;
  parent_id: string | null;
  name: string;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface AssetsTable {
  id: string;
  organization_id: string;
  folder_id: string | null;
  source_asset_id: string | null;
  type: AssetKind;
  name: string;
  mime_type: string;
  size_bytes: number;
  width: number | null;
  height: number | null;
  status: ColumnType<AssetState, AssetState | undefined, AssetState>;
  error: string | null;
  storage_key: string;
  etag: string;
  variants: Json<StoredVariant[]>;
  created_at: CreatedAt;
  updated_at: TimestampDefault;
}

export interface AssetsTables {
  asset_folders: AssetFoldersTable;
  assets: AssetsTable;
}
