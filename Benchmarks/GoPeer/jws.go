package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

var b64url = base64.RawURLEncoding

// es256Key signs JWS compact serialisations with a P-256 key (ES256, RFC 7518 3.4).
type es256Key struct {
	private *ecdsa.PrivateKey
	// kid is the RFC 7638 thumbprint of the public key, as TwoBits names its signing keys.
	kid string
	// fallbackHeader is the encoded header of every fallback token, computed once.
	fallbackHeader string
}

// loadES256Key reads a PEM P-256 private key: PKCS#8 ("PRIVATE KEY", what `.p8` files and
// `twobits keys generate` write) or SEC 1 ("EC PRIVATE KEY").
func loadES256Key(path string) (*es256Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	var private *ecdsa.PrivateKey
	switch block.Type {
	case "PRIVATE KEY":
		parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ec, ok := parsed.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s: not an EC key", path)
		}
		private = ec
	case "EC PRIVATE KEY":
		if private, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: unexpected PEM block %q", path, block.Type)
	}
	if private.Curve != elliptic.P256() {
		return nil, errors.New(path + ": not a P-256 key")
	}
	k := &es256Key{private: private}
	x, y := k.coordinates()
	k.kid = b64url.EncodeToString(sha256Sum(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	k.fallbackHeader = b64url.EncodeToString([]byte(`{"alg":"ES256","kid":"` + k.kid + `","typ":"JWT"}`))
	return k, nil
}

// coordinates are the public point's x and y, 32 bytes each, base64url.
func (k *es256Key) coordinates() (string, string) {
	var x, y [32]byte
	k.private.PublicKey.X.FillBytes(x[:])
	k.private.PublicKey.Y.FillBytes(y[:])
	return b64url.EncodeToString(x[:]), b64url.EncodeToString(y[:])
}

// sign returns "<encodedHeader>.<encoded claims>.<signature>"; the signature is r||s, 32 bytes each.
func (k *es256Key) sign(encodedHeader string, claimsJSON []byte) string {
	input := encodedHeader + "." + b64url.EncodeToString(claimsJSON)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, k.private, digest[:])
	if err != nil {
		// Only a failing system random source gets here; nothing sensible can be signed then.
		panic("ecdsa.Sign: " + err.Error())
	}
	var signature [64]byte
	r.FillBytes(signature[:32])
	s.FillBytes(signature[32:])
	return input + "." + b64url.EncodeToString(signature[:])
}

// fallbackToken signs TwoBits' fallback-tier claims, keys sorted as TwoBits writes them.
func (k *es256Key) fallbackToken(issuer, audience, subject, tier string, limitedUse bool, ttlSeconds int, now time.Time) string {
	iat := now.Unix()
	claims := make([]byte, 0, 256)
	claims = append(claims, `{"aud":"`...)
	claims = append(claims, jsonEscape(audience)...)
	claims = append(claims, `","exp":`...)
	claims = strconv.AppendInt(claims, iat+int64(ttlSeconds), 10)
	claims = append(claims, `,"iat":`...)
	claims = strconv.AppendInt(claims, iat, 10)
	claims = append(claims, `,"iss":"`...)
	claims = append(claims, jsonEscape(issuer)...)
	claims = append(claims, `","jti":"`...)
	claims = append(claims, randomBase64URL(16)...)
	claims = append(claims, '"')
	if limitedUse {
		claims = append(claims, `,"lim":true`...)
	}
	claims = append(claims, `,"sub":"`...)
	claims = append(claims, jsonEscape(subject)...)
	claims = append(claims, `","tier":"`...)
	claims = append(claims, tier...)
	claims = append(claims, `"}`...)
	return k.sign(k.fallbackHeader, claims)
}

// jwksDocument is the JWKS with the one signing key, members sorted like TwoBits' encoder writes them.
func jwksDocument(k *es256Key) []byte {
	x, y := k.coordinates()
	return []byte(`{"keys":[{"alg":"ES256","crv":"P-256","kid":"` + k.kid + `","kty":"EC","use":"sig","x":"` + x + `","y":"` + y + `"}]}`)
}

func sha256Sum(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
