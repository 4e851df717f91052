"""The routes put under load, and the fixed identities of the bench's configuration."""

PROMOTION_ID = "bench-promo"
TEAM_ID = "BENCHTEAM1"
KEY_ID = "BENCHKEY01"

# name -> (HTTP method, path, Apple calls per request, needs tokens, one device per token)
SCENARIOS = {
    "fallback": ("POST", "/v1/fallback-tokens", 1, True, False),
    "claim": ("POST", "/v1/promotions/%s/claim" % PROMOTION_ID, 2, True, True),
    "validate": ("POST", "/v1/devices/validate", 1, True, False),
    "jwks": ("GET", "/.well-known/jwks.json", 0, False, False),
}
SCENARIO_LABELS = {
    "fallback": "POST /v1/fallback-tokens",
    "claim": "POST /v1/promotions/{id}/claim",
    "validate": "POST /v1/devices/validate",
    "jwks": "GET /.well-known/jwks.json",
}

# Routes the Go peer serves: the two its targets compare, and the JWKS since it costs nothing (no validate route).
PEER_SCENARIOS = ("fallback", "claim", "jwks")

# Before a scenario's first run has shown its CPU-bound rate, size token pools for this many req/s.
DEFAULT_RATE_GUESS = {"fallback": 8000, "claim": 2000, "validate": 8000}
MAX_TOKENS_PER_RUN = 400_000
TOKENS_PER_DEVICE = 200  # fallback/validate pools: many devices, a few hundred fresh tokens each
FRESH_DEVICES_PER_CALL = 2_000  # claim pools: one new device per token, this many per sandbox call


def apple_calls(scenario):
    return SCENARIOS[scenario][2]


def one_device_per_token(scenario):
    return SCENARIOS[scenario][4]
