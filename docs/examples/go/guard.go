// The route-table middleware (net/http): what each route needs from TwoBits, enforced before the handler
// sees the request. The same rules as docs/examples/route_guard.py (docs/examples/README.md).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Route policies.
const (
	AppAttest              = "appattest"                // an appattest token in X-Device-Token
	AppAttestOrDeviceCheck = "appattest_or_devicecheck" // an appattest or a devicecheck token
	RequestProof           = "request_proof"            // the TwoBits-Proof-* headers, verified by TwoBits
	Open                   = "open"                     // nothing from TwoBits
)

// MaxBody is the largest body read (and hashed) on a request-proof route; a larger one is refused with 413.
const MaxBody = 1 << 20

var policyTiers = map[string][]string{AppAttest: {"appattest"}, AppAttestOrDeviceCheck: {"appattest", "devicecheck"}}

// Route is a method and a path (without the query).
type Route struct{ Method, Path string }

type verdictKey struct{}

// Verdict is TwoBits' valid verdict for the request's proof (artifact, counter, risk_metric?), for the handler.
func Verdict(r *http.Request) map[string]interface{} {
	v, _ := r.Context().Value(verdictKey{}).(map[string]interface{})
	return v
}

type claimsKey struct{}

// TokenClaims are the verified token's claims, for the handler.
func TokenClaims(r *http.Request) *Claims {
	c, _ := r.Context().Value(claimsKey{}).(*Claims)
	return c
}

// Guard enforces Routes (deny by default) in front of Next.
type Guard struct {
	Next               http.Handler
	Routes             map[Route]string
	Keys               *KeySet
	Issuer, Audience   string
	TwoBitsURL, APIKey string
	Client             *http.Client
}

type refusal struct {
	status                int
	code, message, reason string
}

func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The request target as the app sent it, percent-encoding included: what the proof signed.
	target := r.RequestURI
	path := target
	if i := strings.IndexByte(target, '?'); i >= 0 {
		path = target[:i]
	}
	policy, listed := g.Routes[Route{r.Method, path}]
	var refused *refusal
	switch {
	case !listed:
		refused = &refusal{403, "route_not_listed", r.Method + " " + path + " is not in the route table", ""}
	case policy == Open:
	case policy == RequestProof:
		r, refused = g.checkProof(w, r, target)
	default:
		r, refused = g.checkToken(r, policyTiers[policy])
	}
	if refused != nil {
		fields := map[string]string{"code": refused.code, "message": refused.message}
		if refused.reason != "" {
			fields["reason"] = refused.reason
		}
		body, _ := json.Marshal(map[string]interface{}{"error": fields})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(refused.status)
		w.Write(body)
		return
	}
	g.Next.ServeHTTP(w, r)
}

func (g *Guard) checkToken(r *http.Request, tiers []string) (*http.Request, *refusal) {
	token := strings.TrimPrefix(r.Header.Get("X-Device-Token"), "Bearer ")
	if token == "" {
		return r, &refusal{401, "token_required", "this route needs a TwoBits token in X-Device-Token", ""}
	}
	verifier := &Verifier{Keys: g.Keys, Issuer: g.Issuer, Audience: g.Audience, Tiers: tiers}
	claims, err := verifier.Verify(token, time.Now())
	if err != nil && strings.HasPrefix(err.Error(), "tier_not_allowed") {
		return r, &refusal{403, "tier_not_allowed", fmt.Sprintf("this route accepts %s, not %s", strings.Join(tiers, ", "), err), ""}
	}
	if err == nil && claims.Limited {
		err = Consume(g.Client, strings.TrimRight(g.TwoBitsURL, "/")+"/v1/fallback-tokens/verify", g.APIKey, token, nil)
	}
	if err != nil {
		return r, &refusal{401, "invalid_token", err.Error(), ""}
	}
	return r.WithContext(context.WithValue(r.Context(), claimsKey{}, claims)), nil
}

func (g *Guard) checkProof(w http.ResponseWriter, r *http.Request, target string) (*http.Request, *refusal) {
	fields := map[string]string{
		"artifact":    r.Header.Get("TwoBits-Proof-Key"),
		"client_data": r.Header.Get("TwoBits-Proof-Client-Data"),
		"assertion":   r.Header.Get("TwoBits-Proof-Assertion"),
	}
	if fields["artifact"] == "" || fields["client_data"] == "" || fields["assertion"] == "" {
		message := "this route needs a request proof (the TwoBits-Proof-* headers) signed by the device's App Attest key"
		if r.Header.Get("X-Device-Token") != "" {
			// A fallback-tier caller (devicecheck) has no attested key: say so, never accept the token instead.
			message += "; a token is not accepted instead, whatever its tier (a devicecheck device cannot use this route)"
		}
		return r, &refusal{403, "request_proof_required", message, ""}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		return r, &refusal{413, "body_too_large", fmt.Sprintf("the body is over %d bytes or unreadable", MaxBody), ""}
	}
	// The SHA-256 of the bytes received, never the app's claim of it; the handler reads the same bytes.
	digest := sha256.Sum256(body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	fields["method"], fields["path"], fields["body_sha256"] = r.Method, target, base64.RawURLEncoding.EncodeToString(digest[:])
	verdict, refused := g.askTwoBits(fields)
	if refused != nil {
		return r, refused
	}
	if valid, _ := verdict["valid"].(bool); !valid {
		reason, _ := verdict["reason"].(string)
		return r, &refusal{403, "request_proof_refused", "TwoBits refused the request proof", reason}
	}
	return r.WithContext(context.WithValue(r.Context(), verdictKey{}, verdict)), nil
}

// askTwoBits posts the proof to TwoBits; any answer but a 200 is a refusal (400: malformed, else no verdict yet).
func (g *Guard) askTwoBits(fields map[string]string) (map[string]interface{}, *refusal) {
	body, _ := json.Marshal(fields)
	request, err := http.NewRequest(http.MethodPost, strings.TrimRight(g.TwoBitsURL, "/")+"/v1/app-attest/request-proofs/verify", bytes.NewReader(body))
	if err != nil {
		return nil, &refusal{503, "twobits_unavailable", err.Error(), ""}
	}
	request.Header.Set("Content-Type", "application/json")
	request.Header.Set("Authorization", "Bearer "+g.APIKey)
	response, err := g.Client.Do(request)
	if err != nil {
		return nil, &refusal{503, "twobits_unavailable", "no verdict from TwoBits; retry", ""}
	}
	defer response.Body.Close()
	if response.StatusCode == http.StatusBadRequest {
		return nil, &refusal{400, "request_proof_malformed", "TwoBits could not read the request proof", ""}
	}
	var verdict map[string]interface{}
	if response.StatusCode != http.StatusOK || json.NewDecoder(response.Body).Decode(&verdict) != nil {
		return nil, &refusal{503, "twobits_unavailable", fmt.Sprintf("no verdict from TwoBits (HTTP %d); retry", response.StatusCode), ""}
	}
	return verdict, nil
}
