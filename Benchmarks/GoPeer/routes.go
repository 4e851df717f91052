package main

import (
	"net/http"
	"strconv"
	"time"
)

// exchangeRequest is the body of POST /v1/fallback-tokens (the device-token form; no debug secrets here).
type exchangeRequest struct {
	DeviceToken *string `json:"device_token"`
	InstallID   *string `json:"install_id"`
	LimitedUse  *bool   `json:"limited_use"`
}

// claimRequest is the body of POST /v1/promotions/{id}/claim.
type claimRequest struct {
	DeviceToken *string `json:"device_token"`
}

// fallbackToken exchanges a DeviceCheck token for a fallback-tier token: one Apple query (the layout has a ban
// bit, so TwoBits queries rather than validates), refuse banned devices, sign, answer 201.
func (p *peer) fallbackToken(w http.ResponseWriter, r *http.Request) int {
	var body exchangeRequest
	if err := readJSON(r, &body); err != nil {
		return writeError(w, err)
	}
	if body.DeviceToken == nil {
		return writeError(w, badRequest("give exactly one of device_token or debug_secret"))
	}
	if !isDeviceToken(*body.DeviceToken) {
		return writeError(w, badRequest("device_token must be standard base64 of at most 16384 characters"))
	}
	if body.InstallID != nil && (len(*body.InstallID) == 0 || len(*body.InstallID) > 128) {
		return writeError(w, badRequest("install_id must be 1-128 characters"))
	}
	state, err := p.apple.query(*body.DeviceToken)
	if err != nil {
		return writeError(w, err)
	}
	if state.found && state.bit1 {
		return writeError(w, &apiError{status: 403, code: "device_banned", message: "this device is banned"})
	}

	limited := body.LimitedUse != nil && *body.LimitedUse
	ttl := p.cfg.ttlSeconds
	if limited {
		ttl = 300
	}
	subject := ""
	if body.InstallID != nil {
		subject = *body.InstallID
	} else {
		subject = "anon_" + randomBase64URL(16)
	}
	token := p.issuer.fallbackToken(p.cfg.issuer, p.cfg.audience, subject, "devicecheck", limited, ttl, time.Now())
	// Written directly, as TwoBits does on this route: the token is base64url and dots, the rest fixed.
	answer := `{"expires_in":` + strconv.Itoa(ttl) + `,"tier":"devicecheck","token":"` + token + `","token_type":"Bearer"}`
	return writeJSON(w, 201, answer)
}

// claim sets the promotion bit once per device: query, refuse banned or already-claimed devices, update
// with bit0 set and bit1 kept, answer 200.
func (p *peer) claim(w http.ResponseWriter, r *http.Request, id string) int {
	if id != p.cfg.promotion {
		return writeError(w, &apiError{status: 404, code: "unknown_promotion", message: `no promotion "` + id + `" is configured`})
	}
	var body claimRequest
	if err := readJSON(r, &body); err != nil {
		return writeError(w, err)
	}
	if body.DeviceToken == nil || !isDeviceToken(*body.DeviceToken) {
		return writeError(w, badRequest("device_token must be standard base64 of at most 16384 characters"))
	}
	// The bench's promotion runs this month only (bench.py configures TwoBits the same way).
	month := time.Now().UTC().Format("2006-01")
	state, err := p.apple.query(*body.DeviceToken)
	if err != nil {
		return writeError(w, err)
	}
	if state.found && state.bit1 {
		return writeError(w, &apiError{status: 403, code: "device_banned", message: "this device is banned"})
	}
	if state.found && state.bit0 && state.month >= month {
		return writeError(w, &apiError{status: 409, code: "already_claimed", message: "this device has claimed the promotion",
			details: map[string]string{"claimed_month": state.month}})
	}
	if err := p.apple.update(*body.DeviceToken, true, state.found && state.bit1); err != nil {
		return writeError(w, err)
	}
	return writeJSON(w, 200, `{"claimed":true,"claimed_month":"`+month+`","promotion":"`+jsonEscape(id)+`"}`)
}

func writeJSON(w http.ResponseWriter, status int, body string) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return status
}
