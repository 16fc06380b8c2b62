/** The apiKeyId of a request authorised by a signed link (src/lib/signed-urls.ts) rather than a key. */
export const SIGNED_URL_PRINCIPAL = 'signed-url';

/** Who is calling: an API key of one organization (or a signed link of one), with its scopes and roles. */
export type Principal = {
  organizationId: string;
  apiKeyId: string;
  scopes: ReadonlySet<string>;
};
