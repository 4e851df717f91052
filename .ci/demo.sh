#!/usr/bin/env bash
# `make run`: starts the Apple sandbox and TwoBits with a throw-away developer key and demo clients,
# then prints curl commands that work as pasted. Everything lives in ./run (git-ignored).
#   .ci/demo.sh           serve until Ctrl-C
#   .ci/demo.sh --check   run every printed command, check its status, stop (used by the test suite)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TWOBITS_BIN:-$PWD/.build/release/twobits}
SANDBOX_PORT=${TWOBITS_DEMO_SANDBOX_PORT:-8081}
SERVER_PORT=${TWOBITS_DEMO_PORT:-8080}
RUN=${TWOBITS_DEMO_DIR:-$PWD/run}
SANDBOX=http://127.0.0.1:$SANDBOX_PORT
SERVER=http://127.0.0.1:$SERVER_PORT
TEAM=DEMOTEAM01
KEYID=DEMOKEY001

mkdir -p "$RUN"
chmod 700 "$RUN"
# A throw-away DeviceCheck key: the sandbox trusts it; real Apple never will.
[[ -f "$RUN/AuthKey_DEMO.p8" ]] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$RUN/AuthKey_DEMO.p8" 2>/dev/null
chmod 600 "$RUN/AuthKey_DEMO.p8"
ls "$RUN"/keys/*.pem >/dev/null 2>&1 || "$BIN" keys generate --dir "$RUN/keys" >/dev/null

make_key() { "$BIN" apikey | awk '/^api_key/{k=$2} /^key_sha256/{d=$2} END{print k, d}'; }
if [[ ! -f "$RUN/api-keys.env" ]]; then
    read -r MK MD < <(make_key); read -r TK TD < <(make_key); read -r AK AD < <(make_key)
    printf 'MARKETING_KEY=%s\nMARKETING_SHA=%s\nMAINAPI_KEY=%s\nMAINAPI_SHA=%s\nADMIN_KEY=%s\nADMIN_SHA=%s\n' "$MK" "$MD" "$TK" "$TD" "$AK" "$AD" > "$RUN/api-keys.env"
    chmod 600 "$RUN/api-keys.env"
fi
# shellcheck disable=SC1091
source "$RUN/api-keys.env"
MONTH=$(date -u +%Y-%m)

cat > "$RUN/config.json" <<JSON
{
  "listen": "127.0.0.1:$SERVER_PORT",
  "database": "$RUN/twobits.sqlite",
  "apple": {
    "environment": "development",
    "base_url": "$SANDBOX",
    "team_id": "$TEAM",
    "key_id": "$KEYID",
    "private_key_file": "$RUN/AuthKey_DEMO.p8"
  },
  "clients": [
    {"name": "marketing", "key_sha256": "$MARKETING_SHA", "roles": ["promotions"]},
    {"name": "main-api", "key_sha256": "$MAINAPI_SHA", "roles": ["tokens"]},
    {"name": "admin", "key_sha256": "$ADMIN_SHA", "roles": ["admin"]}
  ],
  "bits": {"bit0": "promotion", "bit1": "ban"},
  "promotions": [{"id": "welcome", "starts": "$MONTH"}],
  "tokens": {"issuer": "twobits-demo", "audience": "main-api", "keys_dir": "$RUN/keys"},
  "app_attest": {"apps": ["$TEAM.com.example.demo"], "environment": "development", "root_ca_file": "$RUN/appattest-root.pem",
                 "receipts": {"root_ca_file": "$RUN/receipt-root.pem"}}
}
JSON

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# The sandbox's simulated iPhones chain their App Attest keys to a root it generates at start and writes
# here; the server trusts it (app_attest.root_ca_file), so the server starts once the sandbox is up.
rm -f "$RUN/appattest-root.pem" "$RUN/receipt-root.pem"
"$BIN" sandbox --listen "127.0.0.1:$SANDBOX_PORT" --team-id $TEAM --key-id $KEYID --key-file "$RUN/AuthKey_DEMO.p8" \
    --app-attest-root "$RUN/appattest-root.pem" --receipt-root "$RUN/receipt-root.pem" > "$RUN/sandbox.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "$SANDBOX/sandbox/v1/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN" serve --config "$RUN/config.json" > "$RUN/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "$SERVER/readyz" >/dev/null 2>&1 && curl -sf "$SANDBOX/sandbox/v1/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$SERVER/readyz" >/dev/null || { echo "the server did not start; see $RUN/server.log:"; tail -5 "$RUN/server.log"; exit 1; }

DEVICE=$(curl -s -X POST "$SANDBOX/sandbox/v1/devices" | sed -E 's/.*"device_id":"([^"]+)".*/\1/')
MINT="curl -s -X POST $SANDBOX/sandbox/v1/devices/$DEVICE/tokens | sed -E 's/.*\"device_token\":\"([^\"]+)\".*/\\1/'"

# Step 11 runs the client library's demo, a package outside this one (docs/examples/ClientDemo, docs/client.md):
# built by the first run. --check runs a prebuilt one (TWOBITS_CLIENT_DEMO_BIN, as Tests/python/test_client_demo.py
# does) and otherwise skips it, so that the check of the curl commands needs no Swift build.
if [[ -n "${TWOBITS_CLIENT_DEMO_BIN:-}" ]]; then
    CLIENT_DEMO="$TWOBITS_CLIENT_DEMO_BIN"
elif [[ "${1:-}" == "--check" ]]; then
    CLIENT_DEMO="echo 'client demo skipped (TWOBITS_CLIENT_DEMO_BIN unset)' #"
else
    CLIENT_DEMO="swift run -q --package-path $PWD/docs/examples/ClientDemo client-demo"
fi

cat > "$RUN/demo-commands.sh" <<CMDS
# TwoBits demo: paste these into a shell. A simulated iPhone, $DEVICE, lives in the sandbox;
# each command mints it a fresh DeviceCheck token, as the app would with DCDevice.generateToken.
source $RUN/api-keys.env
TOKEN=\$($MINT)

# 1. Is this a real Apple device token? (any client)  -> {"valid":true}
curl -s -X POST $SERVER/v1/devices/validate -H "Authorization: Bearer \$MAINAPI_KEY" -H 'Content-Type: application/json' -d "{\"device_token\":\"\$TOKEN\"}"; echo

# 2. Marketing claims the welcome promotion for the device  -> 200 {"claimed":true,...}
curl -s -X POST $SERVER/v1/promotions/welcome/claim -H "Authorization: Bearer \$MARKETING_KEY" -H 'Content-Type: application/json' -H "Idempotency-Key: demo-\$RANDOM" -d "{\"device_token\":\"\$($MINT)\"}"; echo

# 3. A reinstall gives a new token, but the same physical device: refused  -> 409 already_claimed
curl -s -X POST $SERVER/v1/promotions/welcome/claim -H "Authorization: Bearer \$MARKETING_KEY" -H 'Content-Type: application/json' -d "{\"device_token\":\"\$($MINT)\"}"; echo

# 4. The main API exchanges a DeviceCheck token for a fallback-tier token  -> 201 {"tier":"devicecheck",...}
FALLBACK=\$(curl -s -X POST $SERVER/v1/fallback-tokens -H "Authorization: Bearer \$MAINAPI_KEY" -H 'Content-Type: application/json' -d "{\"device_token\":\"\$($MINT)\",\"install_id\":\"demo-install\"}" | sed -E 's/.*"token":"([^"]+)".*/\\1/'); echo "\$FALLBACK"

# 5. ... and verifies it (normally done locally against $SERVER/.well-known/jwks.json)  -> {"valid":true,...}
curl -s -X POST $SERVER/v1/fallback-tokens/verify -H "Authorization: Bearer \$MAINAPI_KEY" -H 'Content-Type: application/json' -d "{\"token\":\"\$FALLBACK\"}"; echo
curl -s $SERVER/.well-known/jwks.json; echo

# 6. An admin bans the device  -> {"applied":true,"banned":true}
curl -s -X POST $SERVER/v1/admin/bans -H "Authorization: Bearer \$ADMIN_KEY" -H 'Content-Type: application/json' -d "{\"device_token\":\"\$($MINT)\",\"reason\":\"demo: abuse report\"}"; echo

# 7. The banned device is refused everywhere  -> 403 device_banned
curl -s -X POST $SERVER/v1/fallback-tokens -H "Authorization: Bearer \$MAINAPI_KEY" -H 'Content-Type: application/json' -d "{\"device_token\":\"\$($MINT)\"}"; echo

# 8. The audit trail of every bit change, newest first
curl -s "$SERVER/v1/admin/audit?limit=10" -H "Authorization: Bearer \$ADMIN_KEY"; echo
# ... or for humans:
$BIN admin audit --server $SERVER --key \$ADMIN_KEY

# 9. The device's raw bits and what they mean; unban it again
$MINT | $BIN admin state --server $SERVER --key \$ADMIN_KEY
$MINT | $BIN admin unban --server $SERVER --key \$ADMIN_KEY --reason "demo over"

# 10. The strong tier for devices with App Attest: a one-time challenge  -> 201 {"challenge":...}
#     (the attestation and assertions that follow are in docs/app-attest.md; the sandbox plays the iPhone)
curl -s -X POST $SERVER/v1/app-attest/challenges -H "Authorization: Bearer \$MAINAPI_KEY"; echo

# 11. The client library (docs/client.md) in a program outside this package that depends on it by path: a
#     simulated iPhone attests and asserts  -> tier appattest; one without App Attest falls back  -> tier devicecheck
#     (the first run builds docs/examples/ClientDemo, about a minute)
$CLIENT_DEMO --server $SERVER --sandbox $SANDBOX --api-key \$MAINAPI_KEY --app-id $TEAM.com.example.demo

# Health, readiness, metrics
curl -s $SERVER/healthz; echo; curl -s $SERVER/readyz; echo; curl -s $SERVER/metrics | head -20
CMDS

if [[ "${1:-}" == "--check" ]]; then
    out=$(bash "$RUN/demo-commands.sh" 2>&1)
    echo "$out"
    expect() { grep -q -- "$1" <<<"$out" || { echo "demo check failed: expected $1"; exit 1; }; }
    expect '{"valid":true}'
    expect '"claimed":true'
    expect '"code":"already_claimed"'
    expect '"tier":"devicecheck"'
    expect '"already_consumed":false'
    expect '"keys":\['
    expect '"applied":true,"banned":true'
    expect '"code":"device_banned"'
    expect '"action":"ban"'
    expect 'banned:      yes'
    expect 'unbanned: written'
    expect '"challenge":"'
    expect '"ready":true'
    if [[ -n "${TWOBITS_CLIENT_DEMO_BIN:-}" ]]; then
        expect 'iPhone 1 asserts: tier appattest (limited use)'
        expect 'iPhone 2 (no App Attest) falls back: tier devicecheck, app_attest_status unsupported'
        expect 'iPhone 2 asks for the strong tier: strong tier unavailable (unsupported)'
    fi
    echo "demo check: every command answered as documented"
    exit 0
fi

echo
echo "TwoBits is serving on $SERVER against the Apple sandbox on $SANDBOX (logs in $RUN)."
echo "Paste these commands into another shell (also saved in $RUN/demo-commands.sh):"
echo
cat "$RUN/demo-commands.sh"
echo
echo "Ctrl-C stops both."
wait
