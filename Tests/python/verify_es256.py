#!/usr/bin/env python3
"""Independent check of TwoBits' ES256 JWTs with PyJWT (cryptography backend).

Usage: verify_es256.py DIR

DIR holds:
  public.pem   the P-256 public key (PEM "PUBLIC KEY")
  tokens.txt   one compact JWS per line

Every token must verify with algorithm ES256, carry the header {"alg":"ES256","kid":"ABCDEFGHIJ"}
and the claims iss == "TEAMID1234" and an integer iat, and its signature must be the raw
64-byte r||s form JWS requires.

Exit status: 0 when every token verifies, 1 on any failure, 2 when PyJWT or cryptography is missing.
"""
import base64
import sys

EXPECTED_HEADER = {"alg": "ES256", "kid": "ABCDEFGHIJ"}
EXPECTED_ISSUER = "TEAMID1234"

try:
    import jwt
    from jwt.algorithms import has_crypto
except ImportError as error:
    print(f"verify_es256.py: cannot import PyJWT ({error}); pip install pyjwt cryptography", file=sys.stderr)
    sys.exit(2)

if not has_crypto:
    print("verify_es256.py: PyJWT has no cryptography backend for ES256; pip install pyjwt cryptography", file=sys.stderr)
    sys.exit(2)


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def main(argv):
    if len(argv) != 2:
        print("usage: verify_es256.py DIR", file=sys.stderr)
        return 1
    directory = argv[1]
    with open(f"{directory}/public.pem", "rb") as f:
        public_pem = f.read()
    with open(f"{directory}/tokens.txt") as f:
        tokens = [line.strip() for line in f if line.strip()]
    if not tokens:
        print("verify_es256.py: no tokens to verify", file=sys.stderr)
        return 1

    failures = 0
    leading_zero = 0
    for number, token in enumerate(tokens, start=1):
        try:
            header = jwt.get_unverified_header(token)
            if header != EXPECTED_HEADER:
                raise ValueError(f"header is {header}")
            signature = b64url_decode(token.split(".")[2])
            if len(signature) != 64:
                raise ValueError(f"signature is {len(signature)} bytes, not raw 64-byte r||s")
            if signature[0] == 0 or signature[32] == 0:
                leading_zero += 1
            claims = jwt.decode(
                token,
                public_pem,
                algorithms=["ES256"],
                issuer=EXPECTED_ISSUER,
                options={"require": ["iss", "iat"]},
                leeway=300,
            )
            if not isinstance(claims["iat"], int):
                raise ValueError(f"iat is {claims['iat']!r}, not an integer")
        except Exception as error:  # any failure of any token fails the run
            failures += 1
            print(f"token {number}: {type(error).__name__}: {error}", file=sys.stderr)

    print(f"verified {len(tokens) - failures} of {len(tokens)} tokens "
          f"({leading_zero} with a leading zero byte in r or s), pyjwt {jwt.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
