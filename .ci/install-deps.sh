#!/usr/bin/env bash
# Installs the Debian packages and Python test tools TwoBits needs, only when something is missing.
# Used by `make run`, `make test` and `make bench`; safe to run repeatedly.
set -euo pipefail

# --run: what `make run` needs; --test: plus what the suites drive (PostgreSQL, wrk, systemd-analyze, the Debian
# packaging tools, Prometheus, Go and Node for the recipes) and the Python test tools (schemathesis pinned);
# --bench: the same as --test.
debs=(pkg-config openssl libssl-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libpq-dev curl)
# --test also needs a PostgreSQL server, for the throw-away cluster of .ci/postgres.sh.
if [[ "${1:-}" != "--run" ]]; then debs+=(postgresql); fi
if [[ "${1:-}" != "--run" ]]; then debs+=(wrk); fi
# --test checks deploy/systemd/twobits.service with systemd-analyze (no running systemd needed).
if [[ "${1:-}" != "--run" ]]; then debs+=(systemd); fi
# --test builds, lints and installs the Debian package (Tests/python/test_package.py).
if [[ "${1:-}" != "--run" ]]; then debs+=(dpkg-dev lintian adduser); fi
# --test checks deploy/prometheus and deploy/grafana with promtool and a real Prometheus (Tests/python/test_observability.py).
if [[ "${1:-}" != "--run" ]]; then debs+=(prometheus); fi
# Go: the benchmark's comparison peer (--bench) and the Go verification recipe (--test, docs/examples/go).
if [[ "${1:-}" != "--run" ]]; then debs+=(golang-go); fi
# Node for docs/examples/node, unless a node is already on the PATH (it may come from elsewhere).
if [[ "${1:-}" != "--run" ]] && ! command -v node >/dev/null; then debs+=(nodejs); fi
# The fake Apple over TLS and HTTP/2 in front of the sandbox (Tests/tls/fake_apple.py, Tests/python/test_apple_tls.py).
if [[ "${1:-}" != "--run" ]]; then debs+=(nginx); fi
# The admin console's browser tests: Debian's headless Chromium and its WebDriver (nothing downloaded elsewhere).
if [[ "${1:-}" != "--run" ]]; then debs+=(chromium chromium-driver); fi

missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
    echo "installing Debian packages: ${missing[*]}"
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" != "--run" ]]; then
    if ! python3 -c 'import jwt, cryptography, pytest' 2>/dev/null; then
        echo "installing Python test tools: pyjwt cryptography pytest"
        python3 -m pip install -q --disable-pip-version-check 'pyjwt[crypto]' cryptography pytest
    fi
    # The console's browser tests drive Debian's chromedriver by path (Selenium Manager never runs: SE_OFFLINE=true).
    if ! python3 -c 'import selenium' 2>/dev/null; then
        echo "installing Python test tools: selenium"
        python3 -m pip install -q --disable-pip-version-check selenium
    fi
    # Tests/python/test_openapi_schemathesis.py is tuned for this version (its checks change between releases).
    schemathesis_version=4.32.5
    if ! python3 -c "import schemathesis, sys; sys.exit(schemathesis.__version__ != '$schemathesis_version')" 2>/dev/null; then
        echo "installing Python test tools: schemathesis $schemathesis_version"
        python3 -m pip install -q --disable-pip-version-check "schemathesis==$schemathesis_version"
    fi
fi
