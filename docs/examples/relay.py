"""The main API's side of the client library's relay (docs/client.md, "Wiring the relay"), Python standard library.

The app never holds a TwoBits API key: its `TwoBitsClient` posts four calls to the main API, which checks the
user's session and forwards each to TwoBits with its own key (role `tokens`):

  POST /v1/app-attest/challenges     POST /v1/app-attest/attestations
  POST /v1/app-attest/assertions     POST /v1/fallback-tokens

In the main API these are four routes of its own web framework; `forward` is the part to copy. The rules:

  1. Authenticate the user's session as for any other route (`authenticate` below is a stand-in), and
     rate-limit these routes per user.
  2. Forward the JSON body unchanged, with `Authorization: Bearer <TwoBits key>`; `app_attest_status` (why a
     token comes from the fallback tier) goes through too: TwoBits counts it (the adoption signal).
  3. Bind the token to the session: on the three calls that issue tokens (attestations, assertions, fallback
     tokens) set `binding` to the user's session exactly as the main API will see it when the token comes
     back on a request (here the session token itself), replacing whatever the app sent. The token then
     carries `bnd`, and the main API checks it against the request's session (`binding` on
     `/v1/fallback-tokens/verify`, or `check_binding` in verify_fallback_token.py).
  4. Pass TwoBits' status, `Retry-After` and body back unchanged: the library decides by TwoBits' error
     codes (device_banned, not_enabled, key_unknown, ...).

Standalone, for trying the library against `twobits serve` (the test suite runs it so,
Tests/python/test_client_relay.py):

  python3 relay.py --listen 127.0.0.1:9000 --twobits http://127.0.0.1:8080 --api-key-file KEYFILE --session TOKEN
"""
import argparse
import json
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTES = ("/v1/app-attest/challenges", "/v1/app-attest/attestations", "/v1/app-attest/assertions", "/v1/fallback-tokens")
# The calls whose token is bound to the user's session (a challenge issues no token).
BOUND = ("/v1/app-attest/attestations", "/v1/app-attest/assertions", "/v1/fallback-tokens")
MAX_BODY = 64 * 1024  # TwoBits' own limit is larger; DeviceCheck tokens are about 3.5 KB


def envelope(code, message):
    """An error in TwoBits' envelope, so the library reads the relay's own refusals the same way."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def forward(twobits_url, api_key, path, body, session):
    """Forwards one call of the user whose session is `session` to TwoBits; returns (status, headers, body) to
    send back to the app unchanged."""
    try:
        fields = json.loads(body or b"{}")
    except ValueError:
        return 400, {}, envelope("bad_request", "the body is not JSON")
    if not isinstance(fields, dict):
        return 400, {}, envelope("bad_request", "the body is not a JSON object")
    if path in BOUND:
        # The session the main API authenticated, never the app's word for it.
        fields["binding"] = session

    request = urllib.request.Request(twobits_url.rstrip("/") + path, data=json.dumps(fields).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + api_key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, {}, answer.read()
    except urllib.error.HTTPError as refusal:
        headers = {"Retry-After": refusal.headers["Retry-After"]} if refusal.headers.get("Retry-After") else {}
        return refusal.code, headers, refusal.read()
    except (urllib.error.URLError, OSError) as error:
        return 502, {}, envelope("twobits_unreachable", f"TwoBits did not answer: {error}")


def body_length(headers):
    """The body's length from its one `Content-Length`, 0 without one, or None when it cannot be trusted: given
    twice, negative or not plain digits. `int()` alone takes "-1" (and `rfile.read(-1)` reads to the end of the
    connection, past any limit), "+5", " 5" and "1_000"; and two lengths are two framings, a proxy in front may
    have taken the other one."""
    values = headers.get_all("Content-Length") or []
    if not values:
        return 0
    value = values[0]
    if len(values) > 1 or not (value.isascii() and value.isdigit()):
        return None
    return int(value)


def make_handler(twobits_url, api_key, authenticate):
    class Relay(BaseHTTPRequestHandler):
        def do_POST(self):
            if self.path not in ROUTES:
                return self.answer(404, {}, envelope("not_found", "no such route"))
            session = authenticate(self.headers.get("Authorization", ""))
            if session is None:
                return self.answer(401, {}, envelope("unauthorized", "sign in first"))
            length = body_length(self.headers)
            if length is None:
                return self.answer(400, {}, envelope("bad_request", "send one Content-Length of plain digits"))
            if length > MAX_BODY:
                return self.answer(413, {}, envelope("payload_too_large", "body too large"))
            self.answer(*forward(twobits_url, api_key, self.path, self.rfile.read(length), session))

        def answer(self, status, headers, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Relay


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--listen", default="127.0.0.1:9000")
    parser.add_argument("--twobits", required=True, help="TwoBits' base URL")
    parser.add_argument("--api-key-file", required=True, help="a file holding the main API's TwoBits key (role tokens)")
    parser.add_argument("--session", action="append", default=[], help="a session token this stand-in accepts (repeatable)")
    options = parser.parse_args()
    api_key = open(options.api_key_file).read().strip()
    sessions = set(options.session)

    def authenticate(authorization):
        # Stand-in for the main API's own session check: returns the session (what tokens are bound to, as the
        # main API will see it on later requests), or None to refuse.
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else ""
        return token if token in sessions else None

    host, port = options.listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), make_handler(options.twobits, api_key, authenticate))
    print(json.dumps({"msg": "relay listening", "url": f"http://{host}:{server.server_port}"}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
