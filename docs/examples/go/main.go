package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// go run . --jwks-url URL --issuer I --audience A [--tiers devicecheck] [--binding SESSION] [--consume-url URL --api-key KEY] TOKEN
// go run . --listen HOST:PORT --twobits-url URL --jwks-url URL --issuer I --audience A: the demo app behind the route guard.
// Prints the claims and exits 0 when the token is accepted; prints "invalid token: reason" and exits 1 otherwise.
func main() {
	jwksURL := flag.String("jwks-url", "", "TwoBits' /.well-known/jwks.json")
	issuer := flag.String("issuer", "", "expected iss")
	audience := flag.String("audience", "", "expected aud")
	tiers := flag.String("tiers", "devicecheck", "comma-separated tiers this route accepts")
	consumeURL := flag.String("consume-url", "", "TwoBits' /v1/fallback-tokens/verify, to consume limited-use tokens")
	apiKey := flag.String("api-key", "", "an API key with the tokens role, for --consume-url")
	var binding *string
	flag.Func("binding", "the session id or OAuth token of this request: the token must be bound to it", func(value string) error {
		binding = &value
		return nil
	})
	listen := flag.String("listen", "", "serve the demo app behind the route guard here instead (with --twobits-url)")
	twobitsURL := flag.String("twobits-url", "", "TwoBits' base URL, for --listen")
	flag.Parse()
	if *listen != "" {
		fmt.Fprintln(os.Stderr, serveDemo(*listen, *twobitsURL, *jwksURL, *issuer, *audience))
		os.Exit(1)
	}
	if flag.NArg() != 1 || *jwksURL == "" || *issuer == "" || *audience == "" {
		fmt.Fprintln(os.Stderr, "usage: verify --jwks-url URL --issuer I --audience A [--tiers T,...] [--binding SESSION] [--consume-url URL --api-key KEY] TOKEN")
		os.Exit(2)
	}
	token := flag.Arg(0)
	verifier := &Verifier{Keys: &KeySet{URL: *jwksURL}, Issuer: *issuer, Audience: *audience, Tiers: strings.Split(*tiers, ",")}
	claims, err := verifier.Verify(token, time.Now())
	if err == nil && binding != nil {
		err = CheckBinding(claims, *binding)
	}
	if err == nil && claims.Limited {
		if *consumeURL == "" {
			err = fmt.Errorf("limited_use: consume it through TwoBits (--consume-url) before honouring it")
		} else {
			err = Consume(&http.Client{Timeout: 5 * time.Second}, *consumeURL, *apiKey, token, binding)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "invalid token:", err)
		os.Exit(1)
	}
	out, _ := json.MarshalIndent(claims, "", "  ")
	fmt.Println(string(out))
}
