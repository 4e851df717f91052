// The route-table middleware for a Node main API (node:http, built-in `crypto` and `fetch` only): what each
// route needs from TwoBits, enforced before the handler sees the request. The same rules as
// docs/examples/route_guard.py (docs/examples/README.md).
//
//   const handle = guard(routes, { twobitsURL, apiKey, keys: new KeySet(jwksURL), issuer, audience });
//   http.createServer((req, res) => handle(req, res, () => app(req, res)));
//
// On a request-proof route the body is read (and hashed) here: the handler finds its bytes in `req.body`
// (a Buffer), the verdict in `req.twobitsProof`; on a token route the claims are in `req.twobitsClaims`.
//
// node guard.mjs --listen HOST:PORT --twobits-url URL --jwks-url URL --issuer I --audience A: the demo app
// behind the guard (the API key from TWOBITS_API_KEY), what Tests/python/test_route_guard.py drives.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { KeySet, consume, verifyToken } from './verify.mjs';

export const APPATTEST = 'appattest';
export const APPATTEST_OR_DEVICECHECK = 'appattest_or_devicecheck';
export const REQUEST_PROOF = 'request_proof';
export const OPEN = 'open';
/** The largest body read (and hashed) on a request-proof route; a larger one is refused with 413. */
export const MAX_BODY = 1 << 20;

const TIERS = { [APPATTEST]: ['appattest'], [APPATTEST_OR_DEVICECHECK]: ['appattest', 'devicecheck'] };

class Refusal extends Error {
  constructor(status, code, message, reason) {
    super(message);
    Object.assign(this, { status, code, reason });
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Refusal(413, 'body_too_large', `the body is over ${MAX_BODY} bytes`));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** routes: a Map or object from "METHOD /path" (no query) to one of the four policies; anything else is refused. */
export function guard(routes, { twobitsURL, apiKey, keys, issuer, audience }) {
  const table = routes instanceof Map ? routes : new Map(Object.entries(routes));
  const base = twobitsURL.replace(/\/+$/, '');

  async function checkToken(req, tiers) {
    const header = req.headers['x-device-token'];
    if (!header) throw new Refusal(401, 'token_required', 'this route needs a TwoBits token in X-Device-Token');
    const token = header.startsWith('Bearer ') ? header.slice(7) : header;
    let claims;
    try {
      claims = await verifyToken(token, { keys, issuer, audience, tiers });
      if (claims.lim === true) await consume(`${base}/v1/fallback-tokens/verify`, apiKey, token);
    } catch (error) {
      if (error.message.startsWith('tier_not_allowed')) {
        throw new Refusal(403, 'tier_not_allowed', `this route accepts ${tiers.join(', ')}, not ${error.message}`);
      }
      throw new Refusal(401, 'invalid_token', error.message);
    }
    req.twobitsClaims = claims;
  }

  async function checkProof(req) {
    const proof = {
      artifact: req.headers['twobits-proof-key'],
      client_data: req.headers['twobits-proof-client-data'],
      assertion: req.headers['twobits-proof-assertion'],
    };
    if (!proof.artifact || !proof.client_data || !proof.assertion) {
      let message = "this route needs a request proof (the TwoBits-Proof-* headers) signed by the device's App Attest key";
      // A fallback-tier caller (devicecheck) has no attested key: say so, never accept the token instead.
      if (req.headers['x-device-token']) message += '; a token is not accepted instead, whatever its tier (a devicecheck device cannot use this route)';
      throw new Refusal(403, 'request_proof_required', message);
    }
    const body = await readBody(req);
    req.body = body;
    // The SHA-256 of the bytes received, never the app's claim of it; req.url is the target as sent.
    const fields = { ...proof, method: req.method, path: req.url, body_sha256: createHash('sha256').update(body).digest('base64url') };
    let response;
    try {
      response = await fetch(`${base}/v1/app-attest/request-proofs/verify`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(fields),
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      throw new Refusal(503, 'twobits_unavailable', 'no verdict from TwoBits; retry');
    }
    if (response.status === 400) throw new Refusal(400, 'request_proof_malformed', 'TwoBits could not read the request proof');
    if (response.status !== 200) throw new Refusal(503, 'twobits_unavailable', `no verdict from TwoBits (HTTP ${response.status}); retry`);
    const verdict = await response.json();
    if (verdict.valid !== true) throw new Refusal(403, 'request_proof_refused', 'TwoBits refused the request proof', verdict.reason ?? 'unknown');
    req.twobitsProof = verdict;
  }

  return async function handle(req, res, next) {
    const path = req.url.split('?', 1)[0];
    try {
      const policy = table.get(`${req.method} ${path}`);
      if (policy === undefined) throw new Refusal(403, 'route_not_listed', `${req.method} ${path} is not in the route table`);
      if (policy === REQUEST_PROOF) await checkProof(req);
      else if (policy !== OPEN) await checkToken(req, TIERS[policy]);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const body = JSON.stringify({ error: { code: error.code, message: error.message, ...(error.reason ? { reason: error.reason } : {}) } });
      res.writeHead(error.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    await next();
  };
}

export const DEMO_ROUTES = {
  'GET /v1/feed': APPATTEST_OR_DEVICECHECK,
  'POST /v1/settings': APPATTEST,
  'POST /v1/payouts': REQUEST_PROOF,
  'GET /healthz': OPEN,
};

async function main() {
  const options = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) options[argv[i].replace(/^--/, '')] = argv[i + 1];
  const handle = guard(DEMO_ROUTES, {
    twobitsURL: options['twobits-url'], apiKey: process.env.TWOBITS_API_KEY, keys: new KeySet(options['jwks-url']),
    issuer: options.issuer, audience: options.audience,
  });
  const [host, port] = [options.listen.slice(0, options.listen.lastIndexOf(':')), Number(options.listen.slice(options.listen.lastIndexOf(':') + 1))];
  const server = createServer((req, res) => {
    handle(req, res, async () => {
      const body = req.body ?? (await readBody(req));
      const answer = { served: `${req.method} ${req.url}`, body_sha256: createHash('sha256').update(body).digest('base64url') };
      if (req.twobitsClaims) answer.tier = req.twobitsClaims.tier;
      if (req.twobitsProof) answer.artifact = req.twobitsProof.artifact;
      const out = JSON.stringify(answer);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(out) });
      res.end(out);
    }).catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  server.listen(port, host, () => console.log(`listening on http://${host}:${server.address().port}`));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
