// `npm run generate`'s last step: generated/operations.json, the operation heads start-up routes by
// (src/http/operations.ts): every operation of generated/openapi.json with its fields dereferenced, but not its
// request body, responses or description, which are dereferenced from the document on their first read. Start-up
// reads this file (~130 KB) instead of parsing the whole document (~1.5 MB; issue 38, bench part a).
// Usage: node scripts/generate-operations.ts [document] [output]   (generated/openapi.json, generated/operations.json)
import { readFileSync, writeFileSync } from 'node:fs';
import type { OpenApiDocument } from '../src/contract/document.ts';
import { operationHeadsFile } from '../src/http/operations.ts';

const [input = 'generated/openapi.json', output = 'generated/operations.json'] = process.argv.slice(2);
const text = readFileSync(input);
writeFileSync(output, `${JSON.stringify(operationHeadsFile(JSON.parse(text.toString('utf8')) as OpenApiDocument, text.length))}\n`);
