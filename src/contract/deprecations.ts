// Operations the document marks `deprecated: true`, and the headers every answer of theirs carries — success,
// validation error, 401, 403, 404 alike: RFC 9745 `Deprecation`, RFC 8594 `Sunset`, and a `Link` to the successor.
// Applied once, by the HTTP layer (src/app.ts), as soon as the route is matched.
const DEPRECATIONS: ReadonlyArray<{ pathPrefix: string; headers: Readonly<Record<string, string>> }> = [
  {
    pathPrefix: '/v1/channels',
    headers: { Deprecation: '@1756684800', Sunset: 'Tue, 01 Sep 2026 00:00:00 GMT', Link: '</v1/sender-ids>; rel="successor-version"' },
  },
];

export function deprecationHeadersFor(operation: { path: string; deprecated?: boolean }): Record<string, string> | undefined {
  if (!operation.deprecated) return undefined;
  const found = DEPRECATIONS.find((d) => operation.path.startsWith(d.pathPrefix));
  if (!found)
    throw new Error(`${operation.path} is deprecated in the document but has no deprecation headers in src/contract/deprecations.ts`);
  return { ...found.headers };
}
