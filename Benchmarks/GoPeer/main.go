// Command gopeer is the comparison peer of `make bench` (Benchmarks/README.md): TwoBits' hot routes written
// plainly in Go with only its standard library, raced against `twobits serve` in the same bench run, behind
// the same sandbox (`twobits sandbox`, the DeviceCheck emulator).
//
// Same request and response shapes as TwoBits (docs/openapi.yaml), same work on the way: an API key checked
// by SHA-256 digest in constant time, one shared developer JWT per refresh period, Apple called with the body
// it documents, an ES256 fallback-tier token with TwoBits' claims, one JSON log line per request written in
// batches. Left out on purpose, as the comparison asks: the device-token reuse ledger, the audit trail and
// the write intents (no SQLite at all), idempotency keys, metrics, retries other than the one re-sign on
// 401, and the request deadlines. What remains is what any service doing this job has to do.
//
//	gopeer -listen 127.0.0.1:0 -apple-url http://127.0.0.1:9000 -apple-key apple.p8 -team-id TEAM -key-id KEY \
//	       -signing-key keys/1-abc.pem -api-key-sha256 <hex> -audience bench-api -promotion bench-promo
//
// Over TLS (`bench.py --apple-link tls-h2|tls-h1`) -apple-url is Apple's own https:// host, which the bench's
// private /etc/hosts sends to the fake Apple's terminator, -apple-ca-file the CA its certificate is verified
// against; HTTP/2 is spoken where ALPN offers it, as Go's net/http does by default.
//
// Every flag can also come from the environment (GOPEER_LISTEN, GOPEER_APPLE_URL, ...: the flag's name in
// upper case with '-' as '_'). The first line on standard output names the bound address.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is everything the peer reads at start.
type config struct {
	listen       string
	appleURL     string
	appleCAFile  string
	appleKey     string
	teamID       string
	keyID        string
	signingKey   string
	apiKeyDigest string
	issuer       string
	audience     string
	promotion    string
	ttlSeconds   int
	maxConns     int
	timeout      time.Duration
	accessLog    bool
}

func main() {
	cfg := parseConfig()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gopeer:", err)
		os.Exit(1)
	}
}

// parseConfig reads flags, each defaulting to its GOPEER_* environment variable.
func parseConfig() config {
	var c config
	str := func(p *string, name, def, usage string) { flag.StringVar(p, name, envOr(name, def), usage) }
	str(&c.listen, "listen", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	str(&c.appleURL, "apple-url", "", "DeviceCheck base URL, e.g. the sandbox's http://127.0.0.1:PORT")
	str(&c.appleCAFile, "apple-ca-file", "", "PEM bundle of the CAs an https:// apple-url is verified against (default: the system's)")
	str(&c.appleKey, "apple-key", "", "the Apple .p8 key (PKCS#8 PEM, P-256)")
	str(&c.teamID, "team-id", "", "Apple team id (the developer JWT's iss)")
	str(&c.keyID, "key-id", "", "Apple key id (the developer JWT's kid)")
	str(&c.signingKey, "signing-key", "", "fallback-token signing key (PKCS#8 PEM, P-256), e.g. a file of `twobits keys generate`")
	str(&c.apiKeyDigest, "api-key-sha256", "", "SHA-256 (hex) of the one API key accepted, as `twobits apikey` prints it")
	str(&c.issuer, "issuer", "twobits", "fallback tokens' iss")
	str(&c.audience, "audience", "main-api", "fallback tokens' aud")
	str(&c.promotion, "promotion", "bench-promo", "the one promotion (on bit0, active this month); bit1 means banned")
	var ttl, conns, timeoutMs string
	str(&ttl, "ttl-seconds", "900", "fallback token lifetime (limited_use: 300)")
	str(&conns, "max-conns", "4096", "idle connections kept to Apple (the sandbox is HTTP/1.1: one call per connection)")
	str(&timeoutMs, "timeout-ms", "10000", "deadline of one Apple call")
	var accessLog string
	str(&accessLog, "access-log", "true", "one JSON line per request on standard output, like TwoBits")
	flag.Parse()
	c.ttlSeconds = atoi("ttl-seconds", ttl)
	c.maxConns = atoi("max-conns", conns)
	c.timeout = time.Duration(atoi("timeout-ms", timeoutMs)) * time.Millisecond
	c.accessLog = accessLog == "true" || accessLog == "1"
	for name, v := range map[string]string{"apple-url": c.appleURL, "apple-key": c.appleKey, "team-id": c.teamID,
		"key-id": c.keyID, "signing-key": c.signingKey, "api-key-sha256": c.apiKeyDigest} {
		if v == "" {
			fatalf("-%s is required (or %s)", name, envName(name))
		}
	}
	return c
}

func envName(flagName string) string {
	return "GOPEER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func envOr(flagName, def string) string {
	if v, ok := os.LookupEnv(envName(flagName)); ok {
		return v
	}
	return def
}

func atoi(name, s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 {
		fatalf("-%s must be a positive whole number, not %q", name, s)
	}
	return n
}

func fatalf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "gopeer: "+format+"\n", args...)
	os.Exit(2)
}

// peer holds what every request shares.
type peer struct {
	cfg       config
	apiKey    [32]byte
	apple     *appleClient
	issuer    *es256Key
	jwks      []byte
	log       *accessLog
	startedAt time.Time
}

func run(cfg config) error {
	digest, err := hex.DecodeString(cfg.apiKeyDigest)
	if err != nil || len(digest) != 32 {
		return fmt.Errorf("-api-key-sha256 must be 64 hex digits")
	}
	appleKey, err := loadES256Key(cfg.appleKey)
	if err != nil {
		return fmt.Errorf("apple key: %w", err)
	}
	signing, err := loadES256Key(cfg.signingKey)
	if err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	roots, err := loadRoots(cfg.appleCAFile)
	if err != nil {
		return fmt.Errorf("apple CA file: %w", err)
	}
	p := &peer{
		cfg:       cfg,
		apple:     newAppleClient(cfg.appleURL, newDeveloperTokens(appleKey, cfg.teamID, cfg.keyID), cfg.maxConns, cfg.timeout, roots),
		issuer:    signing,
		jwks:      jwksDocument(signing),
		log:       newAccessLog(os.Stdout, cfg.accessLog),
		startedAt: time.Now(),
	}
	copy(p.apiKey[:], digest)

	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	server := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	p.log.line(fmt.Sprintf(`{"ts":"%s","level":"info","msg":"listening","address":"%s","signing_kid":"%s"}`,
		timestamp(time.Now()), listener.Addr().String(), signing.kid))
	p.log.flush()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
	}()
	err = server.Serve(listener)
	p.log.close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP routes by hand: Go 1.19's ServeMux has no method or path-parameter patterns.
func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	requestID := randomHex(12)
	w.Header().Set("X-Request-Id", requestID)
	status, route := p.route(w, r)
	p.log.request(started, r.Method, route, status, requestID)
}

// route answers the request and returns the status sent and the route label for the log.
func (p *peer) route(w http.ResponseWriter, r *http.Request) (int, string) {
	path := r.URL.Path
	switch {
	case path == "/v1/fallback-tokens":
		return p.guarded(w, r, "POST", path, p.fallbackToken)
	case strings.HasPrefix(path, "/v1/promotions/") && strings.HasSuffix(path, "/claim"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/v1/promotions/"), "/claim")
		if id == "" || strings.Contains(id, "/") {
			return writeError(w, errNotFound), "unrouted"
		}
		return p.guarded(w, r, "POST", "/v1/promotions/{id}/claim", func(w http.ResponseWriter, r *http.Request) int {
			return p.claim(w, r, id)
		})
	case path == "/.well-known/jwks.json":
		if r.Method != "GET" && r.Method != "HEAD" {
			return writeError(w, methodNotAllowed("GET, HEAD")), path
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		w.WriteHeader(200)
		_, _ = w.Write(p.jwks)
		return 200, path
	case path == "/readyz" || path == "/healthz":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `{"status":"ok"}`)
		return 200, path
	}
	return writeError(w, errNotFound), "unrouted"
}

// guarded checks method, API key and media type, as TwoBits does before any handler runs.
func (p *peer) guarded(w http.ResponseWriter, r *http.Request, method, route string,
	handler func(http.ResponseWriter, *http.Request) int) (int, string) {
	if r.Method != method {
		return writeError(w, methodNotAllowed(method)), route
	}
	if !p.authenticated(r.Header.Get("Authorization")) {
		return writeError(w, errUnauthorized), route
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		return writeError(w, errUnsupportedMediaType), route
	}
	return handler(w, r), route
}

// authenticated compares SHA-256 of the bearer key with the configured digest in constant time.
func (p *peer) authenticated(authorization string) bool {
	if !strings.HasPrefix(authorization, "Bearer ") {
		return false
	}
	key := strings.TrimSpace(authorization[len("Bearer "):])
	if key == "" || len(key) > 512 {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	return subtle.ConstantTimeCompare(sum[:], p.apiKey[:]) == 1
}

// readJSON reads a body of at most 64 KiB into v, refusing unknown fields like TwoBits' allowOnly.
func readJSON(r *http.Request, v interface{}) *apiError {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64*1024+1))
	if err != nil {
		return badRequest("cannot read the request body")
	}
	if len(body) > 64*1024 {
		return errPayloadTooLarge
	}
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(v); err != nil {
		return badRequest("the body must be a JSON object with the documented fields: " + err.Error())
	}
	if decoder.More() {
		return badRequest("the body must be one JSON object")
	}
	return nil
}

// isDeviceToken accepts standard base64 without line breaks up to 16 KiB, checked byte by byte like TwoBits.
func isDeviceToken(s string) bool {
	n := len(s)
	if n == 0 || n > 16*1024 || n%4 != 0 {
		return false
	}
	end := n
	if s[n-1] == '=' {
		end--
		if s[n-2] == '=' {
			end--
		}
	}
	for i := 0; i < end; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}
