"""The HTTP edge against hostile clients, over real sockets against the real binary (issue 12, items 2-4, 10).

Each test replays an attack and asserts the fixed behaviour: slow clients are closed by the receive
deadline while /healthz answers, a per-IP cap, unauthenticated bodies refused before they are read,
request smuggling shapes refused and the connection closed, NUL bytes refused, routing on the raw
path, many query parameters answered, and the edge's errors in the JSON envelope.

Attackers connect from other loopback addresses (127.0.0.2, 127.0.0.3) so the per-IP cap that stops
them never touches the health checks from 127.0.0.1. Loads are bounded: tens of connections, seconds.
"""
import json
import socket
import time
from pathlib import Path

import pytest

from conftest import current_month, http

# Short limits so the suite takes seconds.
EDGE = {"server": {"receive_timeout_ms": 1000, "max_connections_per_ip": 16}}


@pytest.fixture(scope="module")
def edge(twobits_module_factory):
    return twobits_module_factory(name="edge", extra=EDGE)


def connect(deployment, source="127.0.0.1", timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", deployment.port))
    return s


def read_response(s):
    """(status, headers, body, closed_after): one response, then whether the server closed the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed before a full response head: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    length = int(headers.get("content-length", ["0"])[0])
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body, is_closed(s)


def is_closed(s, wait=2.0):
    """True when the server closes the connection within `wait` seconds (EOF or reset)."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def error_code(body):
    value = json.loads(body)
    assert set(value) == {"error"} and {"code", "message"} <= set(value["error"]), value
    return value["error"]["code"]


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def exchange(deployment, raw, source="127.0.0.1"):
    s = connect(deployment, source)
    try:
        s.sendall(raw)
        return read_response(s)
    finally:
        s.close()


def assert_refused_and_closed(deployment, raw):
    """The edge's refusal of `raw`: 400 `bad_request` in the JSON envelope, `Connection: close`, and closed."""
    status, headers, body, closed = exchange(deployment, raw)
    assert status == 400 and error_code(body) == "bad_request", body
    assert headers.get("connection") == ["close"] and closed


def test_slowloris_connections_are_closed_by_the_receive_deadline_while_healthz_answers(edge):
    # Each attacker sends a header line every 200 ms: the 30 s idle timeout would never fire.
    attackers = [connect(edge, "127.0.0.2") for _ in range(12)]
    for s in attackers:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    opened = time.monotonic()
    closed_at = {}
    health = []
    while len(closed_at) < len(attackers) and time.monotonic() - opened < 8:
        for i, s in enumerate(attackers):
            if i in closed_at:
                continue
            try:
                s.sendall(b"X-Slow: 1\r\n")
                s.settimeout(0.01)
                if s.recv(1) == b"":
                    closed_at[i] = time.monotonic() - opened
            except socket.timeout:
                pass
            except (BrokenPipeError, ConnectionResetError):
                closed_at[i] = time.monotonic() - opened
        health.append(http("GET", edge.url + "/healthz", timeout=5).status)
        time.sleep(0.2)
    for s in attackers:
        s.close()
    print(f"slowloris: {len(closed_at)} of {len(attackers)} closed, after {sorted(round(t, 2) for t in closed_at.values())} s; "
          f"healthz answered {health.count(200)} of {len(health)}")
    assert len(closed_at) == len(attackers), "a trickling connection outlived the 1 s receive deadline by 7 s"
    assert health and all(status == 200 for status in health)
    metrics = http("GET", edge.url + "/metrics").raw.decode()
    counted = [line for line in metrics.splitlines() if line.startswith("twobits_http_receive_timeouts_total")]
    assert counted and float(counted[0].split()[-1]) >= len(attackers), counted


def test_a_prompt_request_on_a_kept_alive_connection_is_not_cut(edge):
    s = connect(edge)
    try:
        for _ in range(3):
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            status, _, _, _ = read_response_keep(s)
            assert status == 200
            time.sleep(0.5)  # idle below the 1 s deadline between requests
    finally:
        s.close()


def read_response_keep(s):
    data = b""
    s.settimeout(5)
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(l.split(":")[1]) for l in lines if l.lower().startswith("content-length:")), 0)
    while len(body) < length:
        body += s.recv(65536)
    return int(lines[0].split(" ")[1]), lines, body, False


def test_per_ip_connection_cap_refuses_the_extra_connection_only_for_that_address(twobits_factory):
    # Its own deployment with a long receive deadline, so the held connections stay open however slow the machine.
    edge = twobits_factory(name="per-ip", extra={"server": {"receive_timeout_ms": 30000, "max_connections_per_ip": 16}})
    held = [connect(edge, "127.0.0.3") for _ in range(16)]
    try:
        for s in held:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # incomplete: the connection stays open
        time.sleep(0.2)
        extra = connect(edge, "127.0.0.3")
        try:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert is_closed(extra), "the 17th connection from one address was served"
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            extra.close()
        assert http("GET", edge.url + "/healthz", timeout=5).status == 200
    finally:
        for s in held:
            s.close()


def test_unauthenticated_body_is_refused_before_it_is_sent_and_memory_does_not_grow(edge):
    head = (b"POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 65000\r\n\r\n")
    # The answer comes while the client has sent no body byte at all.
    status, headers, body, closed = exchange(edge, head)
    assert status == 401 and error_code(body) == "unauthorized"
    assert headers.get("connection") == ["close"] and closed

    # 200 clients each try to send 65,000 bytes without a key: nothing is buffered for them.
    before = rss_kib(edge.server.pid)
    sockets = []
    for _ in range(200):
        s = connect(edge, f"127.0.1.{1 + len(sockets) % 20}")  # 10 per address, under the per-IP cap
        s.sendall(head)
        sockets.append(s)
    statuses = []
    for s in sockets:
        statuses.append(read_response(s)[0])
        try:
            s.sendall(b"x" * 65000)
        except (BrokenPipeError, ConnectionResetError):
            pass
    after = rss_kib(edge.server.pid)
    for s in sockets:
        s.close()
    print(f"unauthenticated bodies: RSS {before} KiB -> {after} KiB with 200 refused 65,000-byte uploads")
    assert statuses == [401] * 200
    assert after - before < 200 * 65000 // 1024 // 4, "the refused bodies were buffered"


def test_wrong_role_and_wrong_media_type_are_refused_from_the_headers(edge):
    key = edge.api_keys["marketing"].encode()
    status, _, body, closed = exchange(edge, b"POST /v1/admin/bans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
                                       b"\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n")
    assert status == 403 and error_code(body) == "forbidden" and closed
    status, _, body, closed = exchange(edge, b"POST /v1/admin/bans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                       edge.api_keys["ops"].encode() + b"\r\nContent-Type: text/plain\r\nContent-Length: 60000\r\n\r\n")
    assert status == 415 and error_code(body) == "unsupported_media_type" and closed
    status, _, body, closed = exchange(edge, b"POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n")
    assert status == 404 and error_code(body) == "not_found" and closed


@pytest.mark.parametrize("framing", [
    b"Content-Length: 2\r\nContent-Length: 40\r\n",
    b"Content-Length: 2\r\nContent-Length: 2\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n",
    b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
], ids=["two-different-lengths", "two-equal-lengths", "te-then-cl", "cl-then-te"])
def test_smuggling_shapes_are_refused_and_the_connection_closed(edge, framing):
    key = edge.api_keys["main"].encode()
    # A valid chunked body where chunked is named: libmicrohttpd refuses a malformed chunk by itself, which would
    # hide a missing Transfer-Encoding + Content-Length check.
    body = b"2\r\n{}\r\n0\r\n\r\n" if b"chunked" in framing else b"{}"
    assert_refused_and_closed(edge, b"POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
                              b"\r\nContent-Type: application/json\r\n" + framing + b"\r\n" + body)


def test_nul_in_the_authorization_value_is_refused(edge):
    key = edge.api_keys["ops"].encode()
    ok = exchange(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + b"\r\n\r\n")
    assert ok[0] == 200
    status, _, body, closed = exchange(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + b"\x00junk\r\n\r\n")
    assert status == 400 and error_code(body) == "bad_request" and closed
    # The same with the NUL in the request line.
    status, _, body, _ = exchange(edge, b"GET /v1/admin/audit\x00junk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + b"\r\n\r\n")
    assert status == 400 and error_code(body) == "bad_request"


def test_routing_is_on_the_raw_path(edge):
    ops = {"Authorization": "Bearer " + edge.api_keys["ops"]}
    assert http("GET", edge.url + "/v1/admin/audit", headers=ops).status == 200
    encoded = http("GET", edge.url + "/v1%2fadmin%2faudit", headers=ops)
    assert encoded.status == 404 and encoded.error_code == "not_found"
    nul = http("DELETE", edge.url + "/v1/admin/debug-secrets/s2%00junk", headers=ops)
    assert nul.status == 400 and nul.error_code == "bad_request"


def test_query_parameters_are_decoded_by_the_server_and_capped(edge):
    ops = {"Authorization": "Bearer " + edge.api_keys["ops"]}
    # Decoded values still work (limit=%35 is limit=5).
    page = http("GET", edge.url + "/v1/admin/audit?limit=%35", headers=ops)
    assert page.status == 200, page
    many = http("GET", edge.url + "/healthz?" + "&".join(f"p{i}=1" for i in range(300)), timeout=10)
    assert many.status == 400 and many.error_code == "bad_request", many
    nul = http("GET", edge.url + "/v1/admin/audit?limit=1%00", headers=ops)
    assert nul.status == 400 and nul.error_code == "bad_request"


def test_oversized_headers_and_targets_are_answered_in_json(edge):
    status, _, body, closed = exchange(edge, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10000 + b"\r\n\r\n")
    assert status == 431 and error_code(body) == "headers_too_large" and closed
    status, _, body, closed = exchange(edge, b"GET /healthz?q=" + b"a" * 6000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 414 and error_code(body) == "uri_too_long" and closed
    status, _, body, closed = exchange(edge, b"POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n")
    assert status == 413 and error_code(body) == "payload_too_large" and closed


# -- issue 34, hardening round two: the HTTP edge -------------------------------------------------


def read_until_closed(s, wait=3.0):
    """Everything the server sends until it closes the connection (or `wait` seconds of silence)."""
    s.settimeout(wait)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return data, False
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk


def exchange_all(deployment, raw, source="127.0.0.1"):
    s = connect(deployment, source)
    try:
        s.sendall(raw)
        return read_until_closed(s)
    finally:
        s.close()


def only_answer(data):
    """(status, headers, body) of the one answer in `data`; fails when there are more."""
    assert data.count(b"HTTP/1.1 ") == 1, data[:600]
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(lines[0].split(" ")[1]), headers, body


@pytest.mark.parametrize("framing", [
    b"Content-Length : {n}\r\n",
    b"Content-Length\t: {n}\r\n",
    b"Transfer-Encoding : chunked\r\nContent-Length: {n}\r\n",
    b"X-Note: a\rContent-Length: {n}\r\n",
], ids=["space-before-colon", "tab-before-colon", "te-with-space-and-cl", "bare-cr"])
def test_a_header_name_with_whitespace_or_a_bare_cr_smuggles_nothing(edge, framing):
    # The body is a whole request of its own: were the length not taken, it would run as the next request.
    smuggled = b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + edge.api_keys["ops"].encode() + b"\r\n\r\n"
    raw = (b"POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + edge.api_keys["main"].encode() +
           b"\r\nContent-Type: application/json\r\n" + framing.replace(b"{n}", str(len(smuggled)).encode()) + b"\r\n" + smuggled)
    data, closed = exchange_all(edge, raw)
    status, headers, body = only_answer(data)
    assert status == 400 and error_code(body) == "bad_request", data[:600]
    assert headers.get("connection") == ["close"] and closed


# -- issue 40: line ends, Host, chunked bodies, the Bearer form ------------------------------------


@pytest.mark.parametrize("lines", [
    b"X-A: a\nContent-Length: {n}\r\n\r\n",
    b"X-A:\nContent-Length: {n}\r\n\r\n",
    b"Content-Length: {n}\n\r\n",
    b"Content-Length: {n}\r\n\n",
    b"X-A: a\x00\r\nContent-Length: {n}\r\n\r\n",
], ids=["bare-lf-before-content-length", "bare-lf-after-empty-value", "bare-lf-last-line", "bare-lf-empty-line", "nul-before-crlf"])
def test_a_line_of_the_head_not_ended_by_crlf_smuggles_nothing(edge, lines):
    """libmicrohttpd ends a line at a bare LF; a proxy that does not reads `X-A: a\\nContent-Length: N` as one header,
    frames no body, and sends the body on as the next request."""
    smuggled = b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + edge.api_keys["ops"].encode() + b"\r\n\r\n"
    raw = (b"POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + edge.api_keys["main"].encode() +
           b"\r\nContent-Type: application/json\r\n" + lines.replace(b"{n}", str(len(smuggled)).encode()) + smuggled)
    data, closed = exchange_all(edge, raw)
    status, headers, body = only_answer(data)
    assert status == 400 and error_code(body) == "bad_request", data[:600]
    assert headers.get("connection") == ["close"] and closed


def test_a_bare_lf_before_authorization_does_not_authenticate(edge):
    ops = edge.api_keys["ops"].encode()
    for head in [b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nX-A: a\nAuthorization: Bearer " + ops + b"\r\n\r\n",
                 b"GET /v1/admin/audit HTTP/1.1\nHost: x\r\nAuthorization: Bearer " + ops + b"\r\n\r\n"]:
        assert_refused_and_closed(edge, head)
    status, _, body, _ = exchange(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ops +
                                  b"\r\nConnection: close\r\n\r\n")
    assert status == 200, body


@pytest.mark.parametrize("body", [b"2\r\n{}\r\n0\r\n\r\n", b"2\n{}\n0\n\n"], ids=["crlf-chunks", "bare-lf-chunks"])
def test_a_chunked_body_is_refused_with_length_required(edge, body):
    """libmicrohttpd decodes chunked bodies itself, bare-LF chunk lines included: TwoBits takes Content-Length only."""
    raw = (b"POST /v1/fallback-tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + edge.api_keys["main"].encode() +
           b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    data, closed = exchange_all(edge, raw)
    status, headers, answer = only_answer(data)
    assert status == 411 and error_code(answer) == "length_required", data[:600]
    assert headers.get("connection") == ["close"] and closed


def test_an_http11_request_without_host_is_refused(edge):
    ops = edge.api_keys["ops"].encode()
    assert_refused_and_closed(edge, b"GET /v1/admin/audit HTTP/1.1\r\nAuthorization: Bearer " + ops + b"\r\n\r\n")
    status, _, body, _ = exchange(edge, b"GET /v1/admin/audit HTTP/1.0\r\nAuthorization: Bearer " + ops + b"\r\n\r\n")
    assert status == 200, body


@pytest.mark.parametrize("value", [b"Bearer  {ops}", b"Bearer \t{ops}", b"Bearer {ops} x"], ids=["two-spaces", "space-tab", "inner-space"])
def test_a_bearer_credential_not_in_its_one_form_is_refused(edge, value):
    """RFC 6750 allows several spaces after `Bearer`; a proxy or logger in front may take another key from them."""
    assert_refused_and_closed(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: " +
                              value.replace(b"{ops}", edge.api_keys["ops"].encode()) + b"\r\n\r\n")
    # Trailing whitespace is not part of a field value (RFC 9110 §5.5): the key still authenticates.
    status, _, body, _ = exchange(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                  edge.api_keys["ops"].encode() + b" \r\nConnection: close\r\n\r\n")
    assert status == 200, body


def test_two_authorization_headers_are_refused(edge):
    ops, main = edge.api_keys["ops"].encode(), edge.api_keys["main"].encode()
    for first, second in [(main, ops), (ops, main)]:
        status, _, body, closed = exchange(edge, b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + first +
                                           b"\r\nAuthorization: Bearer " + second + b"\r\n\r\n")
        assert status == 400 and error_code(body) == "bad_request" and closed


# One per name the edge takes once (HTTPServerConfiguration.singleValuedHeaders and TwoBits' idempotency-key),
# named by it: `[host]`, `[idempotency-key]`, ... (Tests/mutation/http.json names them).
@pytest.mark.parametrize("line", [b"Authorization: Bearer {ops}\r\n", b"Host: x\r\n", b"Content-Type: application/json\r\n",
                                  b"Idempotency-Key: 6c1d3b7e-retry-1\r\n"], ids=lambda line: line.partition(b":")[0].decode().lower())
def test_a_header_that_decides_something_given_twice_with_the_same_value_is_refused(edge, line):
    """The last copy used to win: a proxy in front may have checked, routed or keyed the request by the other."""
    ops = edge.api_keys["ops"].encode()
    line = line.replace(b"{ops}", ops)
    head = b"GET /v1/admin/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ops + b"\r\n"
    once = head if line in head else head + line
    status, _, body, _ = exchange(edge, once + b"Connection: close\r\n\r\n")
    assert status == 200, body
    name, _, value = line.partition(b":")
    assert_refused_and_closed(edge, once + name.lower() + b":" + value + b"\r\n")


def test_empty_path_segments_are_not_collapsed_and_a_repeated_query_parameter_is_refused(edge):
    ops = {"Authorization": "Bearer " + edge.api_keys["ops"]}
    assert http("GET", edge.url + "/v1/admin/audit?limit=5", headers=ops).status == 200
    # A proxy allowing only paths outside /v1/admin/ would let these through: none may reach the admin API.
    for path in ["//v1/admin/audit", "/v1//admin/audit", "/v1/admin//audit", "/v1/admin/audit/"]:
        answer = http("GET", edge.url + path, headers=ops)
        assert answer.status == 404 and answer.error_code == "not_found", (path, answer)
    for query in ["limit=5&limit=500", "limit=5&%6cimit=500"]:
        answer = http("GET", edge.url + "/v1/admin/audit?" + query, headers=ops)
        assert answer.status == 400 and answer.error_code == "bad_request", (query, answer)


@pytest.mark.parametrize("raw,status,code", [
    (b"GET /healthz?q=" + b"a" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n", 431, "headers_too_large"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 1\r\n" * 400 + b"\r\n", 431, "headers_too_large"),
    (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "bad_request"),
], ids=["40-kb-target", "64-kb-header", "400-header-lines", "http-2.0", "no-colon"])
def test_answers_libmicrohttpd_gives_itself_are_json(edge, raw, status, code):
    data, closed = exchange_all(edge, raw.replace(b"{main}", edge.api_keys["main"].encode()))
    got, headers, body = only_answer(data)
    assert got == status and headers.get("content-type") == ["application/json"], data[:400]
    assert error_code(body) == code and b"<html" not in data and closed


def test_a_content_length_that_is_no_number_is_closed_without_an_answer(edge):
    # libmicrohttpd 0.9.75 would write its HTML answer's head twice here: the connection is closed instead.
    for value in [b"5x", b"99999999999999999999999"]:
        data, closed = exchange_all(edge, b"POST /v1/fallback-tokens HTTP/1.1\r\nHost: x\r\nContent-Length: " + value + b"\r\n\r\n")
        assert data == b"" and closed
    # The same after an answered request on a kept-alive connection (the edge's state is per request).
    data, closed = exchange_all(edge, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                      b"POST /v1/fallback-tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\n")
    status, _, _ = only_answer(data)
    assert status == 200 and closed
    assert http("GET", edge.url + "/healthz").status == 200


def test_answers_with_tokens_secrets_or_admin_data_are_not_stored_by_caches(edge):
    device_token = edge.mint(edge.new_device())
    answers = {
        "exchange": edge.exchange(device_token),
        "debug secret created": edge.post("/v1/admin/debug-secrets", {"name": "cache-probe"}, client="ops"),
        "debug secrets listed": edge.get("/v1/admin/debug-secrets", client="ops"),
        "audit": edge.get("/v1/admin/audit", client="ops"),
        "overview": edge.get("/v1/admin/overview", client="ops"),
        "refused": edge.get("/v1/admin/audit"),
        "health": edge.get("/healthz"),
    }
    token = answers["exchange"].json["token"]
    answers["verify"] = edge.verify(token)
    answers["debug exchange"] = edge.exchange(debug_secret=answers["debug secret created"].json["debug_secret"])
    for what, answer in answers.items():
        assert answer.status < 500 and answer.headers.get("Cache-Control") == "no-store", (what, answer, dict(answer.headers))
    assert edge.get("/.well-known/jwks.json").headers["Cache-Control"] == "public, max-age=300"
    # The edge's own refusals too.
    status, headers, _, _ = exchange(edge, b"GET /healthz?a=1&a=2 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 400 and headers.get("cache-control") == ["no-store"]


def test_clients_that_hang_up_during_a_slow_apple_query_get_no_write(twobits_factory):
    # Issue 34: five clients sent a claim and hung up 300 ms into a 1 s Apple query, and all five devices
    # were written at Apple (a suspended connection was not watched; only the deadline cancelled). Now the
    # hang-up cancels the claim before Apple's update, while a client that stays connected gets its write.
    from concurrent.futures import ThreadPoolExecutor
    deployment = twobits_factory(promotions=[{"id": "launch", "starts": current_month()}])
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 1000}).status == 200
    leaving = [deployment.new_device() for _ in range(5)]
    staying = deployment.new_device()
    staying_token = deployment.mint(staying)
    key = deployment.api_keys["marketing"].encode()
    sockets = []
    for device in leaving:
        body = json.dumps({"device_token": deployment.mint(device)}).encode()
        s = connect(deployment)
        s.sendall(b"POST /v1/promotions/launch/claim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
                  b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        sockets.append(s)
    with ThreadPoolExecutor(1) as pool:
        stayed = pool.submit(deployment.post, "/v1/promotions/launch/claim", {"device_token": staying_token}, client="marketing")
        time.sleep(0.3)
        for s in sockets:
            s.close()
        answer = stayed.result(timeout=30)
    assert answer.status == 200, answer
    assert deployment.device(staying)["updates"] == 1
    # Past the sandbox's latency for a query and an update: an uncancelled claim would have been written by now.
    time.sleep(1.5)
    assert [deployment.device(d)["updates"] for d in leaving] == [0] * 5
    assert http("GET", deployment.url + "/healthz").status == 200
    assert deployment.server_log().count('"route":"hangup","status":499') == 5, deployment.server_log()
