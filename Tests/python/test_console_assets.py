"""The admin console's assets, without a browser: each is served from the binary with its content type
and every security header, `/admin` redirects to `/admin/`, and an unknown `/admin/` path is 404."""
import http.client

import pytest

from conftest import http as request

ASSETS = {
    "/admin/": "text/html",
    "/admin/console.js": "text/javascript",
    "/admin/console.css": "text/css",
}

REQUIRED_CSP = ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'",
                "base-uri 'none'", "form-action 'self'"]


def assert_security_headers(answer):
    csp = answer.headers.get("Content-Security-Policy") or ""
    for directive in REQUIRED_CSP:
        assert directive in csp, (directive, csp)
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp
    assert answer.headers.get("X-Frame-Options") == "DENY"
    assert answer.headers.get("Referrer-Policy") == "no-referrer"
    assert answer.headers.get("X-Content-Type-Options") == "nosniff"
    assert answer.headers.get("Cache-Control") == "no-store"


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory()


@pytest.mark.parametrize("path", sorted(ASSETS))
def test_asset_served_with_type_and_headers(deployment, path):
    answer = request("GET", deployment.url + path)
    assert answer.status == 200, answer
    assert answer.headers.get("Content-Type", "").split(";")[0].strip() == ASSETS[path]
    assert len(answer.raw) > 100
    assert_security_headers(answer)


def test_page_has_no_inline_script_or_style(deployment):
    page = request("GET", deployment.url + "/admin/").raw.decode()
    assert '<script src="console.js"' in page
    assert "<script>" not in page and "<style" not in page and " style=" not in page and " on" + "click=" not in page
    # Everything the page loads comes from the same origin.
    assert "http://" not in page and "https://" not in page


def test_redirect_to_console(deployment):
    # urllib follows redirects: the final answer is the console page itself.
    answer = request("GET", deployment.url + "/admin")
    assert answer.status == 200 and b"TwoBits admin" in answer.raw
    connection = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=10)
    connection.request("GET", "/admin")
    raw = connection.getresponse()
    assert raw.status == 308 and raw.getheader("Location") == "/admin/"
    assert raw.getheader("X-Frame-Options") == "DENY"
    connection.close()


@pytest.mark.parametrize("path", ["/admin/nope.js", "/admin/index.html", "/admin/../healthz.js", "/admin/console.js/x"])
def test_unknown_console_path_is_404(deployment, path):
    assert request("GET", deployment.url + path).status == 404


def test_console_needs_no_key_but_the_api_does(deployment):
    assert request("GET", deployment.url + "/admin/").status == 200
    assert request("GET", deployment.url + "/v1/admin/bans/pending").status == 401
    wrong_role = deployment.get("/v1/admin/bans/pending", client="main")
    assert wrong_role.status == 403
