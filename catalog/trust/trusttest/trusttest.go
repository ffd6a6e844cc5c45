// Package trusttest is a did:web signer for tests, as a publisher would set
// one up: a P-256 key, the DID document its domain serves, and detached
// JWS signatures made by go-jose, an independent implementation, so that
// what cardcrawl verifies was not signed by cardcrawl's own code.
package trusttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// Signer is one did:web signer with one assertion key.
type Signer struct {
	DID, Kid string
	Key      *ecdsa.PrivateKey
}

// New makes a signer for did:web:domain, its key called #key-1.
func New(tb testing.TB, domain string) *Signer {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	did := "did:web:" + domain
	return &Signer{DID: did, Kid: did + "#key-1", Key: k}
}

// JWK is the public key's members as a JWK.
func (s *Signer) JWK() map[string]any {
	b, err := s.Key.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		panic(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]any{"kty": "EC", "crv": "P-256", "x": enc(b[1:33]), "y": enc(b[33:])}
}

// Document is the signer's DID document, its key referenced from
// assertionMethod by a relative DID URL.
func (s *Signer) Document() []byte {
	b, err := json.Marshal(map[string]any{
		"@context": []string{"https://www.w3.org/ns/did/v1"},
		"id":       s.DID,
		"verificationMethod": []any{map[string]any{
			"id": "#key-1", "type": "JsonWebKey2020", "controller": s.DID, "publicKeyJwk": s.JWK()}},
		"assertionMethod": []string{"#key-1"},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Sign makes the detached compact JWS (header..signature) of payload with
// the protected typ given, ES256 and the signer's kid.
func (s *Signer) Sign(tb testing.TB, typ string, payload []byte) string {
	tb.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.Key, KeyID: s.Kid}},
		(&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		tb.Fatal(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		tb.Fatal(err)
	}
	jws, err := obj.DetachedCompactSerialize()
	if err != nil {
		tb.Fatal(err)
	}
	return jws
}
