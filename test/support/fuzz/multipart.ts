// Malformed multipart/form-data for the upload operations: a valid form built from the operation's schema
// (text fields valid-ish, each `format: binary` property one file part), then broken in one of the ways
// real clients and attackers break it.
import fc from 'fast-check';
import { deref, validish, type Doc, type Schema } from './schema.ts';
import { describeString, hostileString } from './hostile.ts';
import type { FuzzRequest, OpInfo } from './requests.ts';
import { describeRequest } from './requests.ts';

type Part = { name: string; filename?: string; contentType?: string; data: Buffer; rawHeaders?: string };

const SAMPLE_FILES: Record<string, { filename: string; contentType: string; data: Buffer }> = {
  csv: { filename: 'contacts.csv', contentType: 'text/csv', data: Buffer.from('phone,name\n+14155550100,Ada\n+14155550101,Grace\n') },
  png: {
    filename: 'pixel.png',
    contentType: 'image/png',
    data: Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
      'hex',
    ),
  },
};

function isBinary(doc: Doc, s: Schema | undefined): boolean {
  const d = deref(doc, s);
  if (!d) return false;
  if (d.format === 'binary') return true;
  return [...(d.anyOf ?? []), ...(d.oneOf ?? [])].some((b: Schema) => isBinary(doc, b) || isBinary(doc, deref(doc, b)?.items));
}

function encodeForm(parts: Part[], boundary: string, opts: { closing?: boolean; eol?: string } = {}): Buffer {
  const eol = opts.eol ?? '\r\n';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const head =
      p.rawHeaders ??
      `Content-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}${p.contentType ? `${eol}Content-Type: ${p.contentType}` : ''}`;
    chunks.push(Buffer.from(`--${boundary}${eol}${head}${eol}${eol}`, 'latin1'), p.data, Buffer.from(eol));
  }
  if (opts.closing !== false) chunks.push(Buffer.from(`--${boundary}--${eol}`));
  return Buffer.concat(chunks);
}

type Form = { parts: Part[]; fileIndex: number };

function formArb(doc: Doc, op: OpInfo): fc.Arbitrary<Form> {
  const schema = deref(doc, op.multipart)!;
  const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  const sample = op.operationId === 'importContacts' ? SAMPLE_FILES.csv! : SAMPLE_FILES.png!;
  const fields = props.filter(([, s]) => !isBinary(doc, s));
  const files = props.filter(([, s]) => isBinary(doc, s)).map(([k]) => k);
  return fc.tuple(...fields.map(([k, s]) => fc.option(validish(doc, s, 1), { freq: 2 }).map((v) => [k, v] as const))).map((pairs) => {
    const parts: Part[] = pairs
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => ({ name: k, data: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)) }));
    const fileIndex = parts.length;
    for (const f of files) parts.push({ name: f, filename: sample.filename, contentType: sample.contentType, data: sample.data });
    return { parts, fileIndex };
  });
}

type Broken = { body: Buffer; contentType: string; note: string };

const BOUNDARY = '----fuzzBoundary7MA4YWxkTrZu0gW';
const ct = (b = BOUNDARY) => `multipart/form-data; boundary=${b}`;

/** What the breakings need of a form. */
function shapeOf(form: Form) {
  const valid = encodeForm(form.parts, BOUNDARY);
  const file = form.parts[form.fileIndex];
  const withFile = (f: (p: Part) => Part | Part[]) => form.parts.flatMap((p, i) => (i === form.fileIndex ? f(p) : [p]));
  // the offset right after the file part's bytes: the form "ends" inside the file part
  const endOfFileData = encodeForm(form.parts.slice(0, form.fileIndex + 1), BOUNDARY, { closing: false }).length - 2;
  return { parts: form.parts, valid, file, withFile, endOfFileData };
}

type Shape = ReturnType<typeof shapeOf>;
const always = (f: (s: Shape) => Broken) => fc.constant(f);

/** Ways to break a form, as functions of it: the form and the breaking shrink independently. */
const breakings: fc.Arbitrary<(s: Shape) => Broken> = fc.oneof(
  always((s) => ({ body: s.valid, contentType: ct(), note: 'valid form' })),
  fc.integer({ min: 1, max: 99 }).map((pct) => (s: Shape) => {
    const at = Math.max(1, Math.floor((s.valid.length * pct) / 100));
    return { body: s.valid.subarray(0, at), contentType: ct(), note: `truncated at byte ${at} of ${s.valid.length}` };
  }),
  always((s) => ({ body: encodeForm(s.parts, BOUNDARY, { closing: false }), contentType: ct(), note: 'no closing boundary' })),
  always((s) => ({
    body: s.valid.subarray(0, s.endOfFileData),
    contentType: ct(),
    note: 'ends inside the file part (no closing boundary, no CRLF)',
  })),
  always((s) => ({ body: s.valid, contentType: ct('someOtherBoundary'), note: 'wrong boundary in Content-Type' })),
  always((s) => ({ body: s.valid, contentType: 'multipart/form-data', note: 'no boundary parameter' })),
  always((s) => ({ body: s.valid, contentType: 'multipart/form-data; boundary=', note: 'empty boundary parameter' })),
  always((s) => ({ body: encodeForm(s.parts, 'b'.repeat(100)), contentType: ct('b'.repeat(100)), note: '100-character boundary' })),
  always((s) => ({ body: s.valid, contentType: ct(`"${BOUNDARY}"`), note: 'quoted boundary' })),
  always((s) => ({ body: encodeForm(s.parts, BOUNDARY, { eol: '\n' }), contentType: ct(), note: 'LF line endings' })),
  fc.constantFrom('upload', '', 'file[]', 'FILE', 'files', 'file\u0000', 'fi"le').map((name) => (s: Shape) => ({
    body: encodeForm(
      s.withFile((p) => ({ ...p, name })),
      BOUNDARY,
    ),
    contentType: ct(),
    note: `file field misnamed ${JSON.stringify(name)}`,
  })),
  always((s) => ({
    body: encodeForm(
      s.withFile(() => []),
      BOUNDARY,
    ),
    contentType: ct(),
    note: 'no file part',
  })),
  always((s) => ({
    body: encodeForm(
      s.withFile((p) => [p, p]),
      BOUNDARY,
    ),
    contentType: ct(),
    note: 'file part twice',
  })),
  always((s) => ({
    body: encodeForm(
      s.withFile((p) => Array.from({ length: 60 }, () => p)),
      BOUNDARY,
    ),
    contentType: ct(),
    note: '60 file parts',
  })),
  always((s) => ({
    body: encodeForm([...s.parts, ...Array.from({ length: 150 }, (_, i) => ({ name: `f${i}`, data: Buffer.from('x') }))], BOUNDARY),
    contentType: ct(),
    note: '150 extra text fields',
  })),
  fc
    .constantFrom('../../etc/passwd', '\u0000.csv', 'a\r\nX-Injected: 1', '', 'x'.repeat(5000), '%FF%zz.png')
    .map((filename) => (s: Shape) => ({
      body: encodeForm(
        s.withFile((p) => ({ ...p, filename })),
        BOUNDARY,
      ),
      contentType: ct(),
      note: `file name ${describeString(filename)}`,
    })),
  always((s) => ({
    body: encodeForm(
      s.withFile((p) => ({ ...p, rawHeaders: `Content-Disposition: form-data; name="${p.name}"; filename*=UTF-8''%FF%zz%ED%A0%80` })),
      BOUNDARY,
    ),
    contentType: ct(),
    note: "filename*=UTF-8'' with bad percent-encoding",
  })),
  always((s) => ({
    body: encodeForm(
      s.withFile((p) => ({ ...p, rawHeaders: 'Content-Type: text/csv' })),
      BOUNDARY,
    ),
    contentType: ct(),
    note: 'file part without Content-Disposition',
  })),
  always((s) => ({
    body: encodeForm(
      s.withFile((p) => ({
        ...p,
        rawHeaders: `Content-Disposition: form-data; name="${p.name}"; filename="f"\r\nX-Big: ${'h'.repeat(100_000)}`,
      })),
      BOUNDARY,
    ),
    contentType: ct(),
    note: '100 KB part header',
  })),
  hostileString.map((v) => (s: Shape) => ({
    body: encodeForm(
      [
        ...s.parts.filter((p) => p.filename !== undefined),
        { name: 'name', data: Buffer.from(v) },
        { name: 'mapping', data: Buffer.from(v) },
      ],
      BOUNDARY,
    ),
    contentType: ct(),
    note: `text fields "name" and "mapping" = ${describeString(v)}`,
  })),
  always((s) => ({
    body: Buffer.concat([Buffer.from('garbage preamble\r\n'), s.valid, Buffer.from('epilogue garbage')]),
    contentType: ct(),
    note: 'preamble and epilogue',
  })),
  always(() => ({ body: Buffer.from('{"file":"x"}'), contentType: ct(), note: 'JSON body under a multipart Content-Type' })),
  always(() => ({ body: Buffer.from(`--${BOUNDARY}--\r\n`), contentType: ct(), note: 'only the closing boundary' })),
  always((s) => ({ body: s.valid, contentType: `${ct()}; charset=klingon`, note: 'unknown charset' })),
  always((s) => ({
    body: s.file ? encodeForm([{ ...s.file, contentType: 'application/x-msdownload' }], BOUNDARY) : s.valid,
    contentType: ct(),
    note: 'file of an undocumented type',
  })),
);

export function multipartArb(doc: Doc, op: OpInfo): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(formArb(doc, op), breakings)
    .map(([form, breakIt]) => breakIt(shapeOf(form)))
    .map((b) => {
      const req: FuzzRequest = {
        method: op.method,
        target: op.path,
        headers: { 'content-type': b.contentType },
        body: b.body,
        chunked: false,
        badAuth: undefined,
        notes: [b.note],
      };
      Object.defineProperty(req, fc.toStringMethod, { value: () => describeRequest(req), enumerable: false });
      return req;
    });
}
