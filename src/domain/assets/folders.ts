// Asset folders: a tree per organization. Every change holds the organization's tree lock (so depth, cycle
// and name checks cannot race) and reads the whole tree, which MAX_FOLDERS keeps small.
import type { components } from '../../../generated/api.d.ts';
import { inTransaction } from '../../db/database.ts';
import * as q from '../../db/queries/assets/folders.ts';
import { conflict, found, invalidField, unknownReference } from '../errors.ts';
import type { Tenant } from '../tenant.ts';
import type { TenantDb } from '../../db/tenant.ts';

export type AssetFolderRow = q.AssetFolderRow;
/** Levels of nesting: a root folder is level 1. */
const MAX_FOLDER_DEPTH = 10;
const MAX_FOLDERS = 1000;

type CreateRequest = components['schemas']['AssetFolderCreateRequest'];
type UpdateRequest = components['schemas']['AssetFolderUpdateRequest'];
type Links = Map<string, string | null>;

const linksOf = async (tx: TenantDb, orgId: string): Promise<Links> =>
  new Map((await q.folderLinks(tx, orgId)).map((f) => [f.id, f.parent_id]));

/** Level of a folder (root = 1). */
function depthOf(links: Links, id: string): number {
  let depth = 0;
  for (let at: string | null | undefined = id; at; at = links.get(at)) depth++;
  return depth;
}

/** The folder and all its descendants. */
function subtree(links: Links, id: string): Set<string> {
  const out = new Set([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [child, parent] of links) if (parent && out.has(parent) && !out.has(child)) (out.add(child), (grew = true));
  }
  return out;
}

/** Levels the subtree spans below and including the folder (a leaf = 1). */
function heightOf(links: Links, id: string): number {
  const nodes = subtree(links, id);
  let height = 1;
  for (const n of nodes) {
    let h = 1;
    for (let at: string | null | undefined = n; at && at !== id; at = links.get(at)) h++;
    height = Math.max(height, h);
  }
  return height;
}

const tooDeep = () => invalidField('body.parentId', `folders nest at most ${MAX_FOLDER_DEPTH} levels deep`);
const nameTaken = (name: string) => conflict('ALREADY_EXISTS', `A folder named "${name}" already exists in this location.`);

export type FolderFilter = string | undefined; // a folder id, 'null' or undefined

export function listFolders(tenant: Tenant, parentId: FolderFilter): Promise<AssetFolderRow[]> {
  const parent =
    parentId === undefined
      ? { kind: 'any' as const }
      : parentId === 'null'
        ? { kind: 'root' as const }
        : { kind: 'folder' as const, id: parentId };
  return q.listFolders(tenant.db, tenant.organizationId, parent);
}

export function createFolder(tenant: Tenant, body: CreateRequest): Promise<AssetFolderRow> {
  const orgId = tenant.organizationId;
  const parentId = body.parentId ?? null;
  return inTransaction(tenant.db, async (tx) => {
    await q.lockFolderTree(tx, orgId);
    const links = await linksOf(tx, orgId);
    if (parentId !== null && !links.has(parentId)) throw unknownReference('body.parentId', 'asset folder');
    if (links.size >= MAX_FOLDERS) throw invalidField('body', `an organization has at most ${MAX_FOLDERS} folders`);
    if (parentId !== null && depthOf(links, parentId) + 1 > MAX_FOLDER_DEPTH) throw tooDeep();
    if (await q.siblingNamed(tx, orgId, parentId, body.name)) throw nameTaken(body.name);
    return q.insertFolder(tx, orgId, body.name, parentId);
  });
}

export function updateFolder(tenant: Tenant, id: string, body: UpdateRequest): Promise<AssetFolderRow> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    await q.lockFolderTree(tx, orgId);
    const folder = found(await q.getFolder(tx, orgId, id), 'Asset folder');
    const links = await linksOf(tx, orgId);
    const parentId = body.parentId === undefined ? folder.parent_id : body.parentId;
    const name = body.name ?? folder.name;
    if (parentId !== folder.parent_id && parentId !== null) {
      if (!links.has(parentId)) throw unknownReference('body.parentId', 'asset folder');
      if (subtree(links, id).has(parentId))
        throw conflict('CONFLICT', 'A folder cannot be moved into itself or one of its own subfolders.');
      if (depthOf(links, parentId) + heightOf(links, id) > MAX_FOLDER_DEPTH) throw tooDeep();
    }
    if (parentId !== folder.parent_id || name !== folder.name) {
      const sibling = await q.siblingNamed(tx, orgId, parentId, name);
      if (sibling && sibling.id !== id) throw nameTaken(name);
    }
    const patch: { name?: string; parent_id?: string | null } = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.parentId !== undefined) patch.parent_id = body.parentId;
    return found(await q.updateFolder(tx, orgId, id, patch), 'Asset folder');
  });
}

/** Assets directly in the folder become unfiled; a folder with subfolders is refused (409 CONFLICT). */
export function deleteFolder(tenant: Tenant, id: string): Promise<void> {
  const orgId = tenant.organizationId;
  return inTransaction(tenant.db, async (tx) => {
    await q.lockFolderTree(tx, orgId);
    found(await q.getFolder(tx, orgId, id), 'Asset folder');
    if (await q.hasSubfolders(tx, orgId, id)) throw conflict('CONFLICT', 'The folder has subfolders: delete or move them first.');
    await q.deleteFolder(tx, orgId, id);
  });
}
