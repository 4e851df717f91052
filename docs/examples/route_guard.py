"""A WSGI middleware for the main API: a route table says what each route needs from TwoBits, and the
middleware enforces it before the app sees the request (Python standard library + PyJWT, as
verify_fallback_token.py, whose `verify` and `consume` it uses).

Per (method, path) one of:

  APPATTEST                  an `appattest` token (the App Attest tier) in X-Device-Token
  APPATTEST_OR_DEVICECHECK   an `appattest` or a `devicecheck` token
  REQUEST_PROOF              a request proof: the TwoBits-Proof-Key, -Client-Data and -Assertion headers, the
                             device's App Attest key having signed this method, path and body
                             (docs/app-attest.md, "Request proof")
  OPEN                       nothing from TwoBits (sign-in, health)

A route not in the table is refused (deny by default). On a REQUEST_PROOF route the middleware computes the
SHA-256 of the body it received itself (never the app's `body_sha256`, which would prove only that the app
signed something), sends the proof to TwoBits' `POST /v1/app-attest/request-proofs/verify` with its own key
(role `tokens`), and serves the request only on `valid: true`. A caller without a proof is refused with
`request_proof_required`, also one holding a token of any tier: a devicecheck (fallback-tier) caller has no
App Attest key and is told so; a token never stands in for a proof.

Usage:

    routes = {("GET", "/v1/feed"): APPATTEST_OR_DEVICECHECK, ("POST", "/v1/payouts"): REQUEST_PROOF}
    app = RouteGuard(app, routes, twobits_url="https://twobits.internal", api_key=KEY,
                     jwks_url="https://twobits.internal/.well-known/jwks.json", issuer="twobits", audience="main-api")

The app finds what was verified in `environ["twobits.claims"]` (a token's claims) or `environ["twobits.proof"]`
(the proof's verdict: `artifact`, `counter`, `risk_metric`?), and reads the body from `wsgi.input` as usual.

Run as a program, it serves a demo app behind the guard (what Tests/python/test_route_guard.py drives):

    TWOBITS_API_KEY=… python3 route_guard.py --listen 127.0.0.1:8081 --twobits-url http://127.0.0.1:8080 \\
        --jwks-url http://127.0.0.1:8080/.well-known/jwks.json --issuer twobits --audience main-api
"""
import hashlib
import io
import json
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import jwt

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verify_fallback_token as tokens  # noqa: E402

APPATTEST = "appattest"
APPATTEST_OR_DEVICECHECK = "appattest_or_devicecheck"
REQUEST_PROOF = "request_proof"
OPEN = "open"

TIERS = {APPATTEST: frozenset({"appattest"}), APPATTEST_OR_DEVICECHECK: frozenset({"appattest", "devicecheck"})}

TOKEN_HEADER = "X-Device-Token"
PROOF_HEADERS = {"artifact": "TwoBits-Proof-Key", "client_data": "TwoBits-Proof-Client-Data",
                 "assertion": "TwoBits-Proof-Assertion"}

# The largest body read (and hashed) before the app; a larger one is refused with 413.
MAX_BODY = 1 << 20


class Refusal(Exception):
    def __init__(self, status, code, message, reason=None):
        super().__init__(message)
        self.status, self.code, self.message, self.reason = status, code, message, reason

    def body(self):
        error = {"code": self.code, "message": self.message}
        if self.reason:
            error["reason"] = self.reason
        return json.dumps({"error": error}).encode()


def _header(environ, name):
    return environ.get("HTTP_" + name.upper().replace("-", "_"))


def request_target(environ):
    """The request target as the app sent it: the server's raw one when it gives it (gunicorn `RAW_URI`,
    uWSGI and this file's demo server `REQUEST_URI`); else rebuilt from the decoded path, which may differ in
    percent-encoding (then path_mismatch: serve the raw target if your server can)."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if raw:
        return raw
    from urllib.parse import quote
    path = quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""), safe="/;=,:@!$&'()*+~")
    query = environ.get("QUERY_STRING", "")
    return path + ("?" + query if query else "")


def read_body(environ):
    """The exact body bytes, by one Content-Length of plain digits (relay.py's rule), at most MAX_BODY."""
    length = environ.get("CONTENT_LENGTH") or "0"
    if not re.fullmatch(r"[0-9]{1,10}", length):
        raise Refusal(400, "bad_request", "Content-Length must be plain digits")
    if int(length) > MAX_BODY:
        raise Refusal(413, "body_too_large", f"the body is over {MAX_BODY} bytes")
    body = environ["wsgi.input"].read(int(length)) if int(length) else b""
    if len(body) != int(length):
        raise Refusal(400, "bad_request", "the body is shorter than its Content-Length")
    return body


def body_sha256(body):
    """base64url without padding of SHA-256 of the bytes received: what the proof is checked against."""
    import base64
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()


class RouteGuard:
    def __init__(self, app, routes, *, twobits_url, api_key, jwks_url, issuer, audience, timeout=5):
        self.app, self.routes = app, dict(routes)
        self.verify_url = twobits_url.rstrip("/") + "/v1/app-attest/request-proofs/verify"
        self.consume_url = twobits_url.rstrip("/") + "/v1/fallback-tokens/verify"
        self.api_key, self.jwks_url, self.issuer, self.audience, self.timeout = api_key, jwks_url, issuer, audience, timeout

    def __call__(self, environ, start_response):
        try:
            self.check(environ)
        except Refusal as refusal:
            body = refusal.body()
            start_response(f"{refusal.status} Refused", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        return self.app(environ, start_response)

    def check(self, environ):
        """Raises Refusal unless the route's requirement is met; sets twobits.claims or twobits.proof."""
        method = environ["REQUEST_METHOD"]
        target = request_target(environ)
        policy = self.routes.get((method, target.split("?", 1)[0]))
        if policy is None:
            raise Refusal(403, "route_not_listed", f"{method} {target.split('?', 1)[0]} is not in the route table")
        if policy == OPEN:
            return
        if policy == REQUEST_PROOF:
            environ["twobits.proof"] = self.check_proof(environ, method, target)
            return
        environ["twobits.claims"] = self.check_token(environ, TIERS[policy])

    def check_token(self, environ, tiers):
        value = _header(environ, TOKEN_HEADER)
        if not value:
            raise Refusal(401, "token_required", f"this route needs a TwoBits token in {TOKEN_HEADER}")
        token = value[len("Bearer "):] if value.startswith("Bearer ") else value
        try:
            claims = tokens.verify(token, self.jwks_url, self.issuer, self.audience)
            if claims["tier"] not in tiers:
                raise Refusal(403, "tier_not_allowed", f"this route accepts {', '.join(sorted(tiers))}, not {claims['tier']}")
            if claims.get("lim") is True:
                tokens.consume(token, self.consume_url, self.api_key)
        except (jwt.InvalidTokenError, jwt.PyJWKClientError) as error:
            raise Refusal(401, "invalid_token", str(error))
        return claims

    def check_proof(self, environ, method, target):
        proof = {field: _header(environ, name) for field, name in PROOF_HEADERS.items()}
        if not all(proof.values()):
            message = "this route needs a request proof (the TwoBits-Proof-* headers) signed by the device's App Attest key"
            if _header(environ, TOKEN_HEADER):
                # A fallback-tier caller (devicecheck) has no attested key: say so, never accept the token instead.
                message += "; a token is not accepted instead, whatever its tier (a devicecheck device cannot use this route)"
            raise Refusal(403, "request_proof_required", message)
        body = read_body(environ)
        # The app reads the body as usual, the very bytes that were hashed.
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        verdict = self.ask_twobits({**proof, "method": method, "path": target, "body_sha256": body_sha256(body)})
        if verdict.get("valid") is not True:
            raise Refusal(403, "request_proof_refused", "TwoBits refused the request proof", verdict.get("reason", "unknown"))
        return verdict

    def ask_twobits(self, fields):
        """The verdict; any answer but a 200 is a refusal (a 400 names a malformed proof, 503 no verdict yet)."""
        request = urllib.request.Request(self.verify_url, data=json.dumps(fields).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code == 400:
                raise Refusal(400, "request_proof_malformed", "TwoBits could not read the request proof")
            raise Refusal(503, "twobits_unavailable", f"no verdict from TwoBits ({error.code}); retry")
        except (OSError, ValueError) as error:
            raise Refusal(503, "twobits_unavailable", f"no verdict from TwoBits ({error}); retry")


DEMO_ROUTES = {
    ("GET", "/v1/feed"): APPATTEST_OR_DEVICECHECK,
    ("POST", "/v1/settings"): APPATTEST,
    ("POST", "/v1/payouts"): REQUEST_PROOF,
    ("GET", "/healthz"): OPEN,
}


def demo_app(environ, start_response):
    """Echoes what it served and what the guard verified: the tests see the app reached, once per request."""
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    answer = {"served": f"{environ['REQUEST_METHOD']} {request_target(environ)}", "body_sha256": body_sha256(body)}
    if "twobits.claims" in environ:
        answer["tier"] = environ["twobits.claims"]["tier"]
    if "twobits.proof" in environ:
        answer["artifact"] = environ["twobits.proof"]["artifact"]
    out = json.dumps(answer).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(out)))])
    return [out]


def main():
    import argparse
    import os
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
    from socketserver import ThreadingMixIn

    parser = argparse.ArgumentParser(description="The demo app behind RouteGuard (the API key from TWOBITS_API_KEY).")
    parser.add_argument("--listen", default="127.0.0.1:0")
    for name in ("--twobits-url", "--jwks-url", "--issuer", "--audience"):
        parser.add_argument(name, required=True)
    arguments = parser.parse_args()

    class RawTarget(WSGIRequestHandler):
        def get_environ(self):
            environ = super().get_environ()
            environ["REQUEST_URI"] = self.path   # the target as sent, percent-encoding included
            return environ

        def log_message(self, *args):
            pass

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    guard = RouteGuard(demo_app, DEMO_ROUTES, twobits_url=arguments.twobits_url, api_key=os.environ["TWOBITS_API_KEY"],
                       jwks_url=arguments.jwks_url, issuer=arguments.issuer, audience=arguments.audience)
    host, port = arguments.listen.rsplit(":", 1)
    server = make_server(host, int(port), guard, server_class=Server, handler_class=RawTarget)
    print(f"listening on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
