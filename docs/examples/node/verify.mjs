// Verifying TwoBits fallback-tier tokens in a Node main API, with Node's built-in `crypto` and `fetch` only.
//
// The checklist (docs/examples/README.md) is the same in every recipe: fetch and cache the JWKS
// (5 minutes), refetch on an unknown kid at most once a minute, accept only ES256, check the signature
// (raw r‖s: dsaEncoding 'ieee-p1363'), iss, aud, exp and nbf with a small leeway, require sub, iat, jti and
// tier, allow only listed tiers, check the session binding (bnd) when the route has a session, and consume
// limited-use tokens (lim) through TwoBits before honouring them.
//
// node verify.mjs --jwks-url URL --issuer I --audience A [--tiers devicecheck] [--binding SESSION]
//                 [--consume-url URL --api-key KEY] TOKEN
import { createHash, createPublicKey, timingSafeEqual, verify as verifySignature } from 'node:crypto';

export const LEEWAY_SECONDS = 5;

/** TwoBits' JWKS, cached 5 minutes and refetched on an unknown kid at most once a minute. */
export class KeySet {
  constructor(url) {
    this.url = url;
    this.keys = null;
    this.fetchedAt = 0;
    this.lastRefetch = 0;
  }

  async key(kid) {
    const now = Date.now();
    if (this.keys === null || now - this.fetchedAt >= 5 * 60_000) await this.fetch(now);
    if (this.keys.has(kid)) return this.keys.get(kid);
    if (now - this.lastRefetch >= 60_000) {
      this.lastRefetch = now;
      await this.fetch(now);
      if (this.keys.has(kid)) return this.keys.get(kid);
    }
    throw new Error('unknown_key: no key with this kid in the JWKS');
  }

  async fetch(now) {
    const response = await fetch(this.url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`jwks: HTTP ${response.status}`);
    const document = await response.json();
    const keys = new Map();
    for (const jwk of document.keys ?? []) {
      if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.kid !== 'string') continue;
      try {
        keys.set(jwk.kid, createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, format: 'jwk' }));
      } catch {
        // Not a point on the curve: skip it.
      }
    }
    this.keys = keys;
    this.fetchedAt = now;
  }
}

function decodeJSON(part, what) {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new Error(`malformed: ${what}`);
  }
}

/** The claims of a token that passes every check; throws an Error whose message starts with the reason. */
export async function verifyToken(token, { keys, issuer, audience, tiers, now = Date.now() / 1000 }) {
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('malformed: not a JWS');
  const header = decodeJSON(parts[0], 'header');
  // The algorithm is pinned, never taken from the token: no "none", no HS256 with the public key.
  if (header.alg !== 'ES256' || typeof header.kid !== 'string' || header.kid === '') {
    throw new Error('malformed: alg must be ES256 with a kid');
  }
  const key = await keys.key(header.kid);
  const signature = Buffer.from(parts[2], 'base64url');
  if (signature.length !== 64) throw new Error('bad_signature: not a 64-byte r||s');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  if (!verifySignature('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, signature)) throw new Error('bad_signature');
  const claims = decodeJSON(parts[1], 'claims');
  for (const name of ['sub', 'jti', 'tier']) {
    if (typeof claims[name] !== 'string' || claims[name] === '') throw new Error(`malformed: ${name} is required`);
  }
  for (const name of ['iat', 'exp']) {
    if (typeof claims[name] !== 'number') throw new Error(`malformed: ${name} is required`);
  }
  if (claims.iss !== issuer) throw new Error('wrong_issuer');
  if (claims.aud !== audience) throw new Error('wrong_audience');
  if (now > claims.exp + LEEWAY_SECONDS) throw new Error('expired');
  if (typeof claims.nbf === 'number' && now + LEEWAY_SECONDS < claims.nbf) throw new Error('not_yet_valid');
  if (!tiers.includes(claims.tier)) throw new Error(`tier_not_allowed: ${JSON.stringify(claims.tier)}`);
  return claims;
}

/**
 * Throws 'binding_mismatch' unless the verified claims are bound (bnd) to `binding`: the session id or OAuth
 * token of this request, exactly as the app gave it to TwoBits. A token without bnd is refused too: once a
 * route checks bindings, an unbound token could come from any session. Compared in constant time.
 */
export function checkBinding(claims, binding) {
  const expected = Buffer.from(createHash('sha256').update(binding, 'utf8').digest('base64url'));
  const bound = typeof claims.bnd === 'string' ? Buffer.from(claims.bnd) : Buffer.alloc(0);
  if (bound.length !== expected.length || !timingSafeEqual(bound, expected)) throw new Error('binding_mismatch');
}

/** Marks a limited-use token used at TwoBits (checking its binding there too, when given); resolves only for its first use. */
export async function consume(verifyURL, apiKey, token, binding) {
  const response = await fetch(verifyURL, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(binding === undefined ? { token, consume: true } : { token, consume: true, binding }),
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`consume: HTTP ${response.status}`);
  const answer = await response.json();
  if (!answer.valid) throw new Error(`consume: ${answer.reason}`);
  if (answer.already_consumed) throw new Error('already_consumed');
}

function parseArguments(argv) {
  const options = { tiers: 'devicecheck' };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (match) options[match[1]] = match[2] ?? argv[++i];
    else positional.push(argv[i]);
  }
  return { options, positional };
}

async function main() {
  const { options, positional } = parseArguments(process.argv.slice(2));
  if (positional.length !== 1 || !options['jwks-url'] || !options.issuer || !options.audience) {
    console.error('usage: node verify.mjs --jwks-url URL --issuer I --audience A [--tiers T,...] [--binding SESSION] [--consume-url URL --api-key KEY] TOKEN');
    process.exit(2);
  }
  const token = positional[0];
  try {
    const claims = await verifyToken(token, {
      keys: new KeySet(options['jwks-url']), issuer: options.issuer, audience: options.audience, tiers: options.tiers.split(','),
    });
    if (options.binding !== undefined) checkBinding(claims, options.binding);
    if (claims.lim === true) {
      if (!options['consume-url']) throw new Error('limited_use: consume it through TwoBits (--consume-url) before honouring it');
      await consume(options['consume-url'], options['api-key'], token, options.binding);
    }
    console.log(JSON.stringify(claims, null, 2));
  } catch (error) {
    console.error(`invalid token: ${error.message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
