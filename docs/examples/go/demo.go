package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// demoRoutes is the demo app's route table (the same as route_guard.py's).
var demoRoutes = map[Route]string{
	{"GET", "/v1/feed"}:      AppAttestOrDeviceCheck,
	{"POST", "/v1/settings"}: AppAttest,
	{"POST", "/v1/payouts"}:  RequestProof,
	{"GET", "/healthz"}:      Open,
}

// serveDemo serves a demo handler behind the Guard on listen (the API key from TWOBITS_API_KEY): it echoes what
// it served and what was verified, for Tests/python/test_route_guard.py.
func serveDemo(listen, twobitsURL, jwksURL, issuer, audience string) error {
	demo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		digest := sha256.Sum256(body)
		answer := map[string]interface{}{"served": r.Method + " " + r.RequestURI, "body_sha256": base64.RawURLEncoding.EncodeToString(digest[:])}
		if claims := TokenClaims(r); claims != nil {
			answer["tier"] = claims.Tier
		}
		if verdict := Verdict(r); verdict != nil {
			answer["artifact"] = verdict["artifact"]
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
	})
	guard := &Guard{Next: demo, Routes: demoRoutes, Keys: &KeySet{URL: jwksURL}, Issuer: issuer, Audience: audience,
		TwoBitsURL: twobitsURL, APIKey: os.Getenv("TWOBITS_API_KEY"), Client: &http.Client{Timeout: 5 * time.Second}}
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", listener.Addr())
	return http.Serve(listener, guard)
}
