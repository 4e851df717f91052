"""Verifying TwoBits tokens in the main API (Python, PyJWT): fallback-tier tokens and App Attest ones.

A client that cannot use App Attest exchanges an Apple DeviceCheck token at TwoBits for a short-lived
"fallback-tier" token and sends it to the main API. The main API verifies that token locally, with
no call to TwoBits per request:

  1. Fetch TwoBits' public keys from `GET /.well-known/jwks.json` (no API key needed). The document
     is cacheable for 5 minutes; PyJWKClient caches it and refetches when it meets an unknown `kid`,
     which is what happens right after TwoBits rotates its signing key.
  2. Check the ES256 signature, `iss`, `aud` and `exp` (and that `iat`, `sub`, `jti` are there).
  3. When the token is bound to a session (claim `bnd`, the base64url SHA-256 of the session id or OAuth
     token the app gave TwoBits as `binding`), check it against the session of THIS request
     (`check_binding`): a token lifted from one account is then useless under another.
  4. Gate every route on the `tier` claim. App Attest tokens (tier "appattest") come from the same
     signing key and JWKS; a fallback token proves much less: only that Apple recognised a real
     device (tier "devicecheck"), or that a developer holds a debug secret (tier "debug",
     development only). A token WITHOUT a `tier` claim, or with a tier this
     code does not know, is an INVALID token. It is never a pass, and never "unrestricted".

Requirements: `pip install 'pyjwt[crypto]'`.

Usage:

    claims = verify(token, "https://twobits.internal/.well-known/jwks.json",
                    issuer="twobits", audience="main-api")
    if not allowed(claims, "limited_write"):
        return 403

`verify` raises `jwt.InvalidTokenError` (or a subclass) for every token that must be refused, and
`jwt.PyJWKClientError` when the JWKS cannot be fetched or holds no key for the token's `kid`.
"""
import base64
import hashlib
import hmac
import threading

import jwt

# Tiers TwoBits issues, all verified with the same JWKS: "appattest" (App Attest assertions, the strong
# tier), "devicecheck" (a DeviceCheck token, the fallback) and "debug". Anything else (including no tier
# at all) is refused.
KNOWN_TIERS = frozenset({"appattest", "devicecheck", "debug"})

# Debug-tier tokens come from admin-made debug secrets, for simulators and CI, and TwoBits issues
# them only while it talks to Apple's development environment. A production main API must never
# accept them: leave this False there, and set it True only in development deployments.
ACCEPT_DEBUG_TIER = False

# Which tiers each class of route accepts (debug only when ACCEPT_DEBUG_TIER is on). Deny by default: an
# unknown route class allows nothing.
ROUTE_CLASS_TIERS = {
    # Read-only, cheap, rate-limited content: any verified token.
    "read": frozenset({"appattest", "devicecheck", "debug"}),
    # Writes that are limited and reversible (a comment, a like): a real Apple device.
    "limited_write": frozenset({"appattest", "devicecheck"}),
    # Payments, account takeover-prone changes: App Attest only, never a fallback token.
    "sensitive": frozenset({"appattest"}),
}

# Every claim TwoBits always puts in its tokens; a token lacking any of them is refused by PyJWT.
REQUIRED_CLAIMS = ["iss", "aud", "sub", "iat", "exp", "jti", "tier"]

# Tolerated clock difference between TwoBits and this server, in seconds.
LEEWAY_SECONDS = 5

_clients = {}
_clients_lock = threading.Lock()


def _jwks_client(jwks_url):
    """One PyJWKClient per JWKS URL, reused across requests so the key set is cached (5 minutes,
    matching TwoBits' Cache-Control). PyJWKClient refetches by itself on an unknown kid."""
    with _clients_lock:
        client = _clients.get(jwks_url)
        if client is None:
            client = jwt.PyJWKClient(jwks_url, cache_jwk_set=True, lifespan=300)
            _clients[jwks_url] = client
        return client


def verify(token, jwks_url, issuer, audience):
    """Verifies a fallback-tier token and returns its claims.

    Checks, in this order: the `kid` names a key in TwoBits' JWKS; the ES256 signature; `exp` (with
    a few seconds of leeway) and `iat`; `iss` and `aud` equal the configured values; every claim in
    REQUIRED_CLAIMS is present; and `tier` is one TwoBits issues.

    Raises jwt.InvalidTokenError for any token that must be refused.
    """
    # Select the key by the token's `kid` header. The algorithm is pinned below, never taken from
    # the token header, so "alg": "none" or HS256 tricks cannot work.
    signing_key = _jwks_client(jwks_url).get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        signing_key.key,
        algorithms=["ES256"],
        issuer=issuer,
        audience=audience,
        leeway=LEEWAY_SECONDS,
        options={"require": REQUIRED_CLAIMS, "verify_signature": True, "verify_exp": True,
                 "verify_iat": True, "verify_iss": True, "verify_aud": True},
    )
    # `require` proved the tier claim exists; it must also be a tier we know. A missing or unknown
    # tier makes the token invalid: never treat its absence as "no restriction".
    tier = claims.get("tier")
    if not isinstance(tier, str) or tier not in KNOWN_TIERS:
        raise jwt.InvalidTokenError(f"fallback token has no valid tier claim ({tier!r})")
    return claims


def check_binding(claims, binding):
    """Refuses (jwt.InvalidTokenError "binding_mismatch") a token not bound to `binding`: the session id or
    OAuth token of the request, exactly as the app gave it to TwoBits. A token without `bnd` is refused
    too: once a route checks bindings, an unbound token could come from any session. Constant-time compare."""
    expected = base64.urlsafe_b64encode(hashlib.sha256(binding.encode("utf-8")).digest()).rstrip(b"=")
    bound = claims.get("bnd") if isinstance(claims, dict) else None
    if not isinstance(bound, str) or not hmac.compare_digest(bound.encode("utf-8"), expected):
        raise jwt.InvalidTokenError("binding_mismatch")


def allowed(claims, route_class):
    """Whether verified claims may use a route of `route_class` (see ROUTE_CLASS_TIERS).

    Deny by default: claims without a known tier, an unknown route class, a tier the route class
    does not list, and the debug tier unless ACCEPT_DEBUG_TIER is on all answer False.
    """
    tier = claims.get("tier") if isinstance(claims, dict) else None
    if not isinstance(tier, str) or tier not in KNOWN_TIERS:
        return False
    if tier == "debug" and not ACCEPT_DEBUG_TIER:
        return False
    return tier in ROUTE_CLASS_TIERS.get(route_class, frozenset())


def consume(token, verify_url, api_key, binding=None):
    """Marks a limited-use token (`lim`) used at TwoBits before the main API honours it; raises
    jwt.InvalidTokenError unless this is its first use. `verify_url`: TwoBits' /v1/fallback-tokens/verify,
    `api_key`: a key with the `tokens` role; `binding`: the request's session, checked by TwoBits too."""
    import json
    import urllib.request
    body = {"token": token, "consume": True}
    if binding is not None:
        body["binding"] = binding
    request = urllib.request.Request(verify_url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        answer = json.load(response)
    if not answer.get("valid"):
        raise jwt.InvalidTokenError(f"consume: {answer.get('reason')}")
    if answer.get("already_consumed"):
        raise jwt.InvalidTokenError("already_consumed")


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Verify a TwoBits fallback-tier token and show what it may do.")
    parser.add_argument("token")
    parser.add_argument("--jwks-url", required=True, help="e.g. http://127.0.0.1:8080/.well-known/jwks.json")
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--audience", required=True)
    parser.add_argument("--tiers", default="devicecheck", help="comma-separated tiers this route accepts")
    parser.add_argument("--consume-url", help="TwoBits' /v1/fallback-tokens/verify, to consume limited-use tokens")
    parser.add_argument("--api-key", help="an API key with the tokens role, for --consume-url")
    parser.add_argument("--binding", help="the session id or OAuth token of this request: the token must be bound to it")
    arguments = parser.parse_args()
    try:
        verified = verify(arguments.token, arguments.jwks_url, arguments.issuer, arguments.audience)
        if arguments.binding is not None:
            check_binding(verified, arguments.binding)
        if verified["tier"] not in arguments.tiers.split(","):
            raise jwt.InvalidTokenError(f"tier_not_allowed: {verified['tier']!r}")
        if verified.get("lim") is True:
            if not arguments.consume_url:
                raise jwt.InvalidTokenError("limited_use: consume it through TwoBits (--consume-url) before honouring it")
            consume(arguments.token, arguments.consume_url, arguments.api_key, arguments.binding)
    except (jwt.InvalidTokenError, jwt.PyJWKClientError) as error:
        raise SystemExit(f"invalid token: {error}")
    print(json.dumps(verified, indent=2, sort_keys=True))
    for route_class in ROUTE_CLASS_TIERS:
        print(f"{route_class}: {'allowed' if allowed(verified, route_class) else 'refused'}")
