/** Who is calling: an API key of one organization, with its scopes and roles. */
export type Principal = {
  organizationId: string;
  apiKeyId: string;
  scopes: ReadonlySet<string>;
};

export const ROLES = ['role:brand_admin', 'role:platform_admin'] as const;
