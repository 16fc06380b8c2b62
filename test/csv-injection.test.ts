// CSV formula injection (OWASP "CSV Injection"): every CSV the server writes goes through src/lib/csv.ts, which
// prefixes a string cell starting with =, +, -, @, tab or CR with a single quote, then quotes it as RFC 4180
// requires. Plain numbers (a value of type number, or a string that is only a signed decimal such as an E.164
// phone) are left alone. Checked on the writer and on each CSV output: the message report and the compliance
// reports. (No CSV carries contact names today; a contact named like a formula is created anyway so that any
// column showing it later is covered by the same writer.)
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvChunks, csvField, toCsv } from '../src/lib/csv.ts';
import { call, startTestServer, type TestServer } from './support/server.ts';

const FORMULA = '=HYPERLINK("http://x","y")';
const NEUTRALISED = `"'=HYPERLINK(""http://x"",""y"")"`;

describe('csvField', () => {
  it('neutralises strings starting with = + - @ tab or CR, then quotes as RFC 4180 requires', () => {
    expect(csvField(FORMULA)).toBe(NEUTRALISED);
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('+1+cmd|/C calc!A0')).toBe("'+1+cmd|/C calc!A0");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1:A9)')).toBe("'@SUM(A1:A9)");
    expect(csvField('\t=1+1')).toBe("'\t=1+1");
    expect(csvField('\r=1+1')).toBe(`"'\r=1+1"`);
    expect(csvField('=a,b')).toBe(`"'=a,b"`);
    // Not at the start: nothing to neutralise.
    expect(csvField('a=b')).toBe('a=b');
    expect(csvField(' =1')).toBe('" =1"');
  });

  it('leaves numbers alone: numeric values, and strings that are only a signed decimal (E.164 phones, amounts)', () => {
    expect(csvField(-5)).toBe('-5');
    expect(csvField(0.5)).toBe('0.5');
    expect(csvField('+14155550123')).toBe('+14155550123');
    expect(csvField('-0.0039')).toBe('-0.0039');
    expect(csvField('-5')).toBe('-5');
    expect(csvField('+1 415 555 0123')).toBe("'+1 415 555 0123");
    expect(csvField('-1e5')).toBe("'-1e5");
  });

  it('round-trips through a CSV parser with the quote kept (what a spreadsheet shows as text)', () => {
    const text = toCsv(['a', 'b'], [{ a: FORMULA, b: '@x' }]);
    expect(parse(text, { columns: true })).toEqual([{ a: `'${FORMULA}`, b: "'@x" }]);
  });

  it('streams (csvChunks, exports) exactly what toCsv writes: header with the first batch, then one chunk per batch', async () => {
    const rows = [
      { a: FORMULA, b: 1 },
      { a: '-2+3', b: '+14155550123' },
      { a: 'plain', b: null },
    ];
    async function* batches() {
      yield rows.slice(0, 2);
      yield [];
      yield rows.slice(2);
    }
    const chunks: string[] = [];
    for await (const c of csvChunks(['a', 'b'], batches())) chunks.push(c);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]!.startsWith('a,b\r\n')).toBe(true);
    expect(chunks.join('')).toBe(toCsv(['a', 'b'], rows));
    const empty: string[] = [];
    for await (const c of csvChunks(['a', 'b'], [])) empty.push(c);
    expect(empty).toEqual(['a,b\r\n']);
  });
});

describe('CSV outputs', () => {
  let srv: TestServer;
  let org: Awaited<ReturnType<TestServer['newOrg']>>;

  beforeAll(async () => {
    srv = await startTestServer();
    org = await srv.newOrg('CSV injection org');
    const db = srv.context.db;
    const contact = await db
      .insertInto('contacts')
      .values({ organization_id: org.organizationId, phone: '+14155550177', name: FORMULA, attributes: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const conversation = await db
      .insertInto('conversations')
      .values({ organization_id: org.organizationId, contact_id: contact.id, sender_id: org.senderId, source_type: 'api' })
      .returning('id')
      .executeTakeFirstOrThrow();
    // The error code is the one free-text column of the report (a carrier's code, stored as received).
    await db
      .insertInto('messages')
      .values({
        organization_id: org.organizationId,
        conversation_id: conversation.id,
        contact_id: contact.id,
        contact_phone: '+14155550177',
        sender_id: org.senderId,
        content: JSON.stringify({ type: 'text', text: FORMULA }),
        origin: 'api',
        direction: 'outbound',
        requested_channel: 'SMS',
        planned_channel: 'SMS',
        channel: 'SMS',
        message_type: 'SERVICE',
        status: 'failed',
        segments: 1,
        error_code: FORMULA,
      })
      .execute();
    const dnc = await call(srv, 'POST', '/v1/compliance/dnc', { key: org.apiKey.secret, body: { phone: '+14155550178', reason: FORMULA } });
    expect(dnc.status, dnc.text).toBe(200);
  });
  afterAll(() => srv.close());

  it('the message report neutralises a formula in a cell and keeps the phone and numbers as they are', async () => {
    const res = await call(srv, 'GET', '/v1/reports/messages?format=csv', { key: org.apiKey.secret });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.text).toContain(`,failed,${NEUTRALISED},1,`);
    expect(res.text).toContain(',+14155550177,');
    expect(res.text).not.toMatch(/(^|,)=HYPERLINK/m);
    const [row] = parse(res.text, { columns: true }) as Array<Record<string, string>>;
    expect(row).toMatchObject({ errorCode: `'${FORMULA}`, contactPhone: '+14155550177', segments: '1' });
  });

  it('the compliance DNC report neutralises a formula in the reason', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await call(srv, 'GET', `/v1/compliance/reports/dnc?startDate=${today}&endDate=${today}&format=csv`, {
      key: org.apiKey.secret,
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`,+14155550178,${NEUTRALISED},`);
    expect(res.text).not.toMatch(/(^|,)=HYPERLINK/m);
    const rows = parse(res.text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toEqual([expect.objectContaining({ phone: '+14155550178', reason: `'${FORMULA}` })]);
  });
});
