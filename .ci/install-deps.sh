#!/usr/bin/env bash
# Installs the Debian packages and Python test tools TwoBits needs, only when something is missing.
# Used by `make run`, `make test` and `make bench`; safe to run repeatedly.
set -euo pipefail

# --run: what `make run` needs; --test: plus wrk and the Python test tools (schemathesis pinned); --bench: --test
# plus Debian's Go toolchain, for the benchmark's standard-library-only comparison peer (Benchmarks/GoPeer).
debs=(pkg-config openssl libssl-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libpq-dev curl)
# --test also needs a PostgreSQL server, for the throw-away cluster of .ci/postgres.sh.
if [[ "${1:-}" != "--run" ]]; then debs+=(postgresql); fi
if [[ "${1:-}" != "--run" ]]; then debs+=(wrk); fi
# The admin console's browser tests: Debian's headless Chromium and its WebDriver (nothing downloaded elsewhere).
if [[ "${1:-}" != "--run" ]]; then debs+=(chromium chromium-driver); fi
if [[ "${1:-}" == "--bench" ]]; then debs+=(golang-go); fi

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
