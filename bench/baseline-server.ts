// The bare baseline: node:http + pg answering GET /v1/api-keys with the same SQL the full stack runs for
// listApiKeys, for a fixed organization — no framework, no auth, no validation, no logging. Sent as a named
// prepared statement, as the full stack sends it (src/db/prepared.ts): both sides parse and plan it once per connection.
import { createServer } from 'node:http';
import pg from 'pg';

const url = process.env.DATABASE_URL!;
const orgId = process.env.BENCH_ORG_ID!;
const pool = new pg.Pool({ connectionString: url, max: 10 });
const SQL = `select *, count(*) over() as total_count from api_keys where organization_id = $1
             order by created_at desc, id desc limit 20 offset 0`;

const server = createServer(async (req, res) => {
  if (req.url?.startsWith('/v1/api-keys')) {
    const { rows } = await pool.query({ name: 'api-keys-list', text: SQL, values: [orgId] });
    const data = rows.map((r) => ({ id: r.id, name: r.name, prefix: r.prefix, scopes: r.scopes, createdAt: r.created_at }));
    const body = JSON.stringify({ data, pagination: { page: 1, limit: 20, total: Number(rows[0]?.total_count ?? 0), hasMore: false } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } else {
    res.writeHead(404).end();
  }
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
