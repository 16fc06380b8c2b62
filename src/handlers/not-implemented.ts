// Operations of openapi.yaml that have no handler: each answers 501 NOT_IMPLEMENTED naming itself (never a fake
// success), and `npm run ops:status` lists them. Empty: every operation of the document has a handler. The list
// exists for contract-first work: an operation can land in the document (types, mock and reference follow from
// it) before its handler, listed here meanwhile. Start-up (assertEveryOperationAccounted, src/http/api.ts)
// refuses an operation with neither a handler nor an entry here, or with both.
export const notImplementedOperations: readonly string[] = [];
