package main

import (
	"crypto/rand"
	"encoding/hex"
)

// randomBytes reads n bytes from the system's CSPRNG (getrandom on Linux).
func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return b
}

func randomBase64URL(n int) string { return b64url.EncodeToString(randomBytes(n)) }

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

// randomUUID is a version 4 UUID, lower case, like TwoBits' transaction ids.
func randomUUID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
