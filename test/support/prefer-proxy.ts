// A pass-through proxy in front of a Prism mock that adds Prism's `Prefer` header to chosen requests, so a test can
// pick which of the document's own examples the fake answers (`example=cancelMessage`) where Prism would otherwise
// make one up from the schema. Everything else — method, path, headers, body, and Prism's answer — passes unchanged,
// so Prism still validates every request. Records each request's method, path and body. Prism checks that HTTP Basic
// credentials are there, not whose they are: given the account's (`basicAuth`, "sid:token"), the proxy answers a
// request carrying other credentials itself, as Twilio does (401, error 20003 "Authenticate").
import { createServer, request, type Server } from 'node:http';

export type PreferProxy = {
  baseUrl: string;
  requests: Array<{ method: string; path: string; body: string }>;
  /** Requests whose method and path match get `Prefer: <value>` until cleared (undefined). */
  prefer: (rule: { method: string; path: RegExp; value: string } | undefined) => void;
  close: () => Promise<void>;
};

const TWILIO_401 = JSON.stringify({
  code: 20003,
  message: 'Authenticate',
  more_info: 'https://www.twilio.com/docs/errors/20003',
  status: 401,
});

export async function startPreferProxy(target: string, opts: { basicAuth?: string } = {}): Promise<PreferProxy> {
  const expected = opts.basicAuth ? `Basic ${Buffer.from(opts.basicAuth).toString('base64')}` : undefined;
  const upstream = new URL(target);
  const requests: PreferProxy['requests'] = [];
  let rule: { method: string; path: RegExp; value: string } | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, body: body.toString() });
      const given = req.headers.authorization;
      if (expected && given?.startsWith('Basic ') && given !== expected) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="Twilio API"' });
        res.end(TWILIO_401);
        return;
      }
      const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: upstream.host };
      if (rule && rule.method === req.method && rule.path.test(path)) headers.prefer = rule.value;
      const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    prefer: (r) => void (rule = r),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
