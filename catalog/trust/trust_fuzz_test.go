package trust

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/jcs"
)

// FuzzFind: any document gives at most MaxSignatures signatures, each
// with a payload in canonical form or a problem saying why not, and
// checking one against any DID document ends in a verdict of the two
// kinds, never a panic or an acceptance without a key.
func FuzzFind(f *testing.F) {
	f.Add([]byte(catalogWith(specManifest, "ROOT")), []byte(`{"id":"did:web:acme.com"}`))
	f.Add([]byte(`{"signature":{"signer":1},"entries":[{"trustManifests":[{"signature":"x"}]}]}`), []byte(`[]`))
	f.Add([]byte(`{"signature":{"signer":"did:web:a.example","profile":"did-web-v1","issuedAt":"2026-01-01T00:00:00Z","jws":"e30..AA"}}`),
		[]byte(`{"id":"did:web:a.example","assertionMethod":["#k"],"verificationMethod":[{"id":"#k"}]}`))
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc, didDoc []byte) {
		found, more := Find(doc)
		if len(found) > MaxSignatures || (more > 0 && len(found) != MaxSignatures) {
			t.Fatalf("%d found, %d more", len(found), more)
		}
		for _, s := range found {
			if (s.Problem == "") == (s.Payload == nil) {
				t.Fatalf("%s: problem %q with payload %q", s.Path, s.Problem, s.Payload)
			}
			if s.Payload != nil {
				if again, err := jcs.Canonicalize(s.Payload); err != nil || !bytes.Equal(again, s.Payload) {
					t.Fatalf("%s: payload %q is not canonical", s.Path, s.Payload)
				}
			}
			err := Authenticate(s, didDoc, now)
			if err == nil {
				t.Fatalf("%s: a fuzzed signature verified", s.Path)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("%s: %v is neither invalid nor unsupported", s.Path, err)
			}
		}
	})
}
