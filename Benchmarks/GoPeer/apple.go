package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// developerTokens shares one developer JWT across every Apple call, re-signed at a random age between 30
// and 50 minutes (Apple refuses an iat older than 60 and asks for at most one new token per 20), or at
// once after Apple answered 401 to it. The same policy as TwoBits' DeveloperTokenProvider.
type developerTokens struct {
	key    *es256Key
	teamID string
	header string

	mu        sync.Mutex
	jwt       string
	refreshAt time.Time
}

func newDeveloperTokens(key *es256Key, teamID, keyID string) *developerTokens {
	header := b64url.EncodeToString([]byte(`{"alg":"ES256","kid":"` + jsonEscape(keyID) + `"}`))
	return &developerTokens{key: key, teamID: teamID, header: header}
}

// current returns the shared token, signing a new one only when it has reached its refresh age.
func (d *developerTokens) current() string {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jwt != "" && now.Before(d.refreshAt) {
		return d.jwt
	}
	iat := now.Unix()
	d.jwt = d.key.sign(d.header, []byte(`{"iss":"`+jsonEscape(d.teamID)+`","iat":`+strconv.FormatInt(iat, 10)+`}`))
	d.refreshAt = time.Unix(iat, 0).Add(30*time.Minute + time.Duration(rand.Int63n(int64(20*time.Minute))))
	return d.jwt
}

// invalidate drops jwt if it is still the shared one, so the next call signs anew.
func (d *developerTokens) invalidate(jwt string) {
	d.mu.Lock()
	if d.jwt == jwt {
		d.jwt = ""
	}
	d.mu.Unlock()
}

// appleClient calls DeviceCheck's query_two_bits and update_two_bits over one shared http.Client.
type appleClient struct {
	base   string
	tokens *developerTokens
	http   *http.Client
}

// bitState is a query's answer; found is false for Apple's "bit state not found".
type bitState struct {
	found      bool
	bit0, bit1 bool
	month      string // last_update_time, "YYYY-MM"
}

// loadRoots reads a PEM bundle of CA certificates; nil (the system's roots) for no file.
func loadRoots(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New(path + " holds no PEM certificate")
	}
	return pool, nil
}

// newAppleClient's transport verifies an https:// Apple against roots (nil: the system's) and speaks HTTP/2
// where the server offers it by ALPN, as a Go service calling Apple would.
func newAppleClient(base string, tokens *developerTokens, maxConns int, timeout time.Duration, roots *x509.CertPool) *appleClient {
	transport := &http.Transport{
		Proxy:       nil, // never a proxy from the environment: the bench talks to loopback
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// Over plaintext (the sandbox) or an HTTP/1.1-only host a connection carries one call at a time: keep
		// as many idle connections as calls can be in flight, or every burst would dial (and TIME_WAIT) anew.
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 5 * time.Second,
		// A custom DialContext or TLSClientConfig turns Go's automatic HTTP/2 off; this turns it back on.
		ForceAttemptHTTP2: true,
	}
	return &appleClient{base: strings.TrimSuffix(base, "/"), tokens: tokens, http: &http.Client{Transport: transport, Timeout: timeout}}
}

// Apple's literal answers (TwoBits' AppleResponseBody).
const (
	bitStateNotFound           = "Failed to find bit state"
	bitStateNotFoundDocumented = "Bit State Not Found"
	badDeviceToken             = "Missing or incorrectly formatted device token payload"
)

func (a *appleClient) query(deviceToken string) (bitState, *apiError) {
	body, err := a.call("query_two_bits", deviceToken, "")
	if err != nil {
		return bitState{}, err
	}
	if len(body) == 0 || body[0] != '{' {
		text := strings.TrimSpace(string(body))
		if text == bitStateNotFound || text == bitStateNotFoundDocumented {
			return bitState{}, nil
		}
		return bitState{}, errAppleUnavailable
	}
	var answer struct {
		Bit0           *bool   `json:"bit0"`
		Bit1           *bool   `json:"bit1"`
		LastUpdateTime *string `json:"last_update_time"`
	}
	if json.Unmarshal(body, &answer) != nil || answer.Bit0 == nil || answer.Bit1 == nil || answer.LastUpdateTime == nil ||
		len(*answer.LastUpdateTime) != 7 {
		// An unparseable 200 is transient, never "clear".
		return bitState{}, errAppleUnavailable
	}
	return bitState{found: true, bit0: *answer.Bit0, bit1: *answer.Bit1, month: *answer.LastUpdateTime}, nil
}

// update writes both bits, as TwoBits always does. Apple's success answer is an empty 200.
func (a *appleClient) update(deviceToken string, bit0, bit1 bool) *apiError {
	bits := `,"bit0":` + strconv.FormatBool(bit0) + `,"bit1":` + strconv.FormatBool(bit1)
	body, err := a.call("update_two_bits", deviceToken, bits)
	if err != nil {
		return err
	}
	if len(body) != 0 {
		return errAppleUnavailable
	}
	return nil
}

// call POSTs Apple's documented body and returns a 200's body, re-signing the developer token once on 401.
// Calls run to their own deadline (the client's timeout), not the client request's: a write, once sent,
// is not abandoned halfway because the caller went away.
func (a *appleClient) call(endpoint, deviceToken, bits string) ([]byte, *apiError) {
	for attempt := 0; ; attempt++ {
		jwt := a.tokens.current()
		// Written directly: the token is validated base64 and the transaction id a UUID, nothing to escape.
		body := `{"device_token":"` + deviceToken + `","timestamp":` + strconv.FormatInt(time.Now().UnixMilli(), 10) +
			`,"transaction_id":"` + randomUUID() + `"` + bits + `}`
		request, err := http.NewRequest("POST", a.base+"/v1/"+endpoint, strings.NewReader(body))
		if err != nil {
			return nil, errAppleUnavailable
		}
		request.Header.Set("Authorization", "Bearer "+jwt)
		request.Header.Set("Content-Type", "application/json")
		response, err := a.http.Do(request)
		if err != nil {
			return nil, errAppleUnavailable
		}
		answer, err := io.ReadAll(io.LimitReader(response.Body, 64*1024))
		response.Body.Close()
		if err != nil {
			return nil, errAppleUnavailable
		}
		switch status := response.StatusCode; {
		case status == 200:
			return answer, nil
		case status == 401 && attempt == 0:
			// Expired, or the key was rotated: sign anew once, then give up.
			a.tokens.invalidate(jwt)
			continue
		case status == 400 && bytes.HasPrefix(bytes.TrimSpace(answer), []byte(badDeviceToken)):
			return nil, errInvalidDeviceToken
		case status == 429 || status >= 500:
			return nil, errAppleUnavailable
		case status >= 400 && status < 500:
			return nil, errAppleAuthFailed
		default:
			return nil, errAppleUnavailable
		}
	}
}
