package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an answer in TwoBits' one error envelope: {"error":{"code":"…","message":"…"}}.
type apiError struct {
	status     int
	code       string
	message    string
	retryAfter int
	details    map[string]string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

var (
	errNotFound             = &apiError{status: 404, code: "not_found", message: "no such route"}
	errUnauthorized         = &apiError{status: 401, code: "unauthorized", message: "send Authorization: Bearer <API key>"}
	errUnsupportedMediaType = &apiError{status: 415, code: "unsupported_media_type", message: "send Content-Type: application/json"}
	errPayloadTooLarge      = &apiError{status: 413, code: "payload_too_large", message: "request bodies are limited to 64 KiB"}
	errInvalidDeviceToken   = &apiError{status: 400, code: "invalid_device_token",
		message: "Apple does not accept this device token (malformed, unknown, expired, or from a build of the other environment: Xcode builds are development)"}
	errAppleAuthFailed = &apiError{status: 502, code: "apple_auth_failed",
		message: "Apple rejected this service's credentials or environment; an operator has been alerted"}
	errAppleUnavailable = &apiError{status: 503, code: "apple_unavailable", message: "Apple DeviceCheck is not answering; retry later", retryAfter: 2}
)

func badRequest(message string) *apiError {
	return &apiError{status: 400, code: "bad_request", message: message}
}

func methodNotAllowed(allowed string) *apiError {
	return &apiError{status: 405, code: "method_not_allowed", message: "allowed: " + allowed}
}

// writeError sends the envelope and returns the status, for the access log.
func writeError(w http.ResponseWriter, e *apiError) int {
	fields := map[string]string{"code": e.code, "message": e.message}
	for k, v := range e.details {
		fields[k] = v
	}
	// SetEscapeHTML(false): "<API key>" stays as written, as TwoBits sends it.
	var body bytes.Buffer
	encoder := json.NewEncoder(&body)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(map[string]map[string]string{"error": fields})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(bytes.TrimSuffix(body.Bytes(), []byte("\n")))
	return e.status
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	quoted, _ := json.Marshal(s)
	return string(quoted[1 : len(quoted)-1])
}
