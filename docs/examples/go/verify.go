// Package main verifies TwoBits fallback-tier tokens in a Go main API, with the standard library only.
//
// The checklist (docs/examples/README.md) is the same in every recipe: fetch and cache the JWKS
// (5 minutes), refetch on an unknown kid at most once a minute, accept only ES256, check the signature
// (raw r‖s), iss, aud, exp and nbf with a small leeway, require sub, iat, jti and tier, allow only listed
// tiers, check the session binding (bnd) when the route has a session, and consume limited-use tokens (lim)
// through TwoBits before honouring them.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Leeway is the clock difference tolerated between TwoBits and this server.
const Leeway = 5 * time.Second

// KeySet caches TwoBits' JWKS: for 5 minutes (its Cache-Control), and refetched on an unknown kid at most
// once a minute, so a burst of forged kids cannot make this server hammer TwoBits.
type KeySet struct {
	URL    string
	Client *http.Client

	mu          sync.Mutex
	keys        map[string]*ecdsa.PublicKey
	fetchedAt   time.Time
	lastRefetch time.Time
}

func (s *KeySet) key(kid string) (*ecdsa.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.keys == nil || now.Sub(s.fetchedAt) >= 5*time.Minute {
		if err := s.fetch(now); err != nil {
			return nil, err
		}
	}
	if key, ok := s.keys[kid]; ok {
		return key, nil
	}
	if now.Sub(s.lastRefetch) >= time.Minute {
		s.lastRefetch = now
		if err := s.fetch(now); err != nil {
			return nil, err
		}
		if key, ok := s.keys[kid]; ok {
			return key, nil
		}
	}
	return nil, errors.New("unknown_key: no key with this kid in the JWKS")
}

func (s *KeySet) fetch(now time.Time) error {
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	response, err := client.Get(s.URL)
	if err != nil {
		return fmt.Errorf("jwks: %w", err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		return fmt.Errorf("jwks: HTTP %d", response.StatusCode)
	}
	var document struct {
		Keys []struct {
			Kty, Crv, X, Y, Kid string
		} `json:"keys"`
	}
	if err := json.NewDecoder(response.Body).Decode(&document); err != nil {
		return fmt.Errorf("jwks: %w", err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, k := range document.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" || k.Kid == "" {
			continue
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			continue
		}
		key := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if !key.Curve.IsOnCurve(key.X, key.Y) {
			continue
		}
		keys[k.Kid] = key
	}
	s.keys, s.fetchedAt = keys, now
	return nil
}

// Claims are a verified token's claims.
type Claims struct {
	Issuer    string `json:"iss"`
	Audience  string `json:"aud"`
	Subject   string `json:"sub"`
	IssuedAt  *int64 `json:"iat"`
	Expires   *int64 `json:"exp"`
	NotBefore *int64 `json:"nbf,omitempty"`
	ID        string `json:"jti"`
	Tier      string `json:"tier"`
	Limited   bool   `json:"lim,omitempty"`
	// Binding is the base64url SHA-256 of the session the token is bound to; empty on unbound tokens.
	Binding string `json:"bnd,omitempty"`
}

// Verifier checks tokens against one TwoBits.
type Verifier struct {
	Keys     *KeySet
	Issuer   string
	Audience string
	// Tiers this route accepts; a token whose tier is not listed (or has none) is refused. Never "debug" in production.
	Tiers []string
}

// Verify returns the claims of a token that passes every check, or an error whose text starts with the reason.
func (v *Verifier) Verify(token string, now time.Time) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("malformed: not a JWS")
	}
	headerBytes, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, errors.New("malformed: header")
	}
	var header struct{ Alg, Kid string }
	if err := json.Unmarshal(headerBytes, &header); err != nil {
		return nil, errors.New("malformed: header")
	}
	// The algorithm is pinned, never taken from the token: no "none", no HS256 with the public key.
	if header.Alg != "ES256" || header.Kid == "" {
		return nil, errors.New("malformed: alg must be ES256 with a kid")
	}
	key, err := v.Keys.key(header.Kid)
	if err != nil {
		return nil, err
	}
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(signature) != 64 {
		return nil, errors.New("bad_signature: not a 64-byte r||s")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(signature[:32]), new(big.Int).SetBytes(signature[32:])
	if !ecdsa.Verify(key, digest[:], r, s) {
		return nil, errors.New("bad_signature")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("malformed: payload")
	}
	var claims Claims
	decoder := json.NewDecoder(bytes.NewReader(payload))
	if err := decoder.Decode(&claims); err != nil {
		return nil, errors.New("malformed: claims")
	}
	if claims.Subject == "" || claims.ID == "" || claims.IssuedAt == nil || claims.Expires == nil || claims.Tier == "" {
		return nil, errors.New("malformed: sub, iat, exp, jti and tier are required")
	}
	if claims.Issuer != v.Issuer {
		return nil, errors.New("wrong_issuer")
	}
	if claims.Audience != v.Audience {
		return nil, errors.New("wrong_audience")
	}
	if now.After(time.Unix(*claims.Expires, 0).Add(Leeway)) {
		return nil, errors.New("expired")
	}
	if claims.NotBefore != nil && now.Add(Leeway).Before(time.Unix(*claims.NotBefore, 0)) {
		return nil, errors.New("not_yet_valid")
	}
	for _, tier := range v.Tiers {
		if claims.Tier == tier {
			return &claims, nil
		}
	}
	return nil, fmt.Errorf("tier_not_allowed: %q", claims.Tier)
}

// CheckBinding refuses ("binding_mismatch") verified claims not bound to binding: the session id or OAuth
// token of this request, exactly as the app gave it to TwoBits. A token without bnd is refused too: once a
// route checks bindings, an unbound token could come from any session. Compared in constant time.
func CheckBinding(claims *Claims, binding string) error {
	digest := sha256.Sum256([]byte(binding))
	expected := base64.RawURLEncoding.EncodeToString(digest[:])
	if claims.Binding == "" || subtle.ConstantTimeCompare([]byte(claims.Binding), []byte(expected)) != 1 {
		return errors.New("binding_mismatch")
	}
	return nil
}

// Consume marks a limited-use token used at TwoBits (POST /v1/fallback-tokens/verify, role tokens), which
// checks its binding too when one is given; nil only for the first use.
func Consume(client *http.Client, verifyURL, apiKey, token string, binding *string) error {
	fields := map[string]interface{}{"token": token, "consume": true}
	if binding != nil {
		fields["binding"] = *binding
	}
	body, _ := json.Marshal(fields)
	request, err := http.NewRequest(http.MethodPost, verifyURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	request.Header.Set("Content-Type", "application/json")
	request.Header.Set("Authorization", "Bearer "+apiKey)
	response, err := client.Do(request)
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	defer response.Body.Close()
	var answer struct {
		Valid           bool   `json:"valid"`
		Reason          string `json:"reason"`
		AlreadyConsumed bool   `json:"already_consumed"`
	}
	if response.StatusCode != http.StatusOK || json.NewDecoder(response.Body).Decode(&answer) != nil {
		return fmt.Errorf("consume: HTTP %d", response.StatusCode)
	}
	if !answer.Valid {
		return fmt.Errorf("consume: %s", answer.Reason)
	}
	if answer.AlreadyConsumed {
		return errors.New("already_consumed")
	}
	return nil
}
