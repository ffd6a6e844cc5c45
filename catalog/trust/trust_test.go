package trust

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/catalog/trust/trusttest"
)

// testSigner is trusttest's signer, with a signature under a header
// written by hand for the rules go-jose would not break.
type testSigner struct{ *trusttest.Signer }

func newSigner(t testing.TB, domain string) *testSigner { return &testSigner{trusttest.New(t, domain)} }

func (s *testSigner) jwk() map[string]any { return s.JWK() }
func (s *testSigner) document() []byte    { return s.Document() }
func (s *testSigner) sign(t testing.TB, typ string, payload []byte) string {
	return s.Sign(t, typ, payload)
}

// signRaw signs payload under a header written by hand, for the header
// rules go-jose would not break.
func (s *testSigner) signRaw(t testing.TB, header string, payload []byte) string {
	t.Helper()
	h := base64.RawURLEncoding.EncodeToString([]byte(header))
	d := sha256.Sum256([]byte(h + "." + base64.RawURLEncoding.EncodeToString(payload)))
	r, ss, err := ecdsa.Sign(rand.Reader, s.Key, d[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return h + ".." + base64.RawURLEncoding.EncodeToString(sig)
}

// The spec's example of a signed release-only manifest, and the payload it
// gives for it, in its JCS form (written out here, not computed).
const (
	specManifest = `{
  "contributor": "did:web:acme.com",
  "subject": {
    "identifier": "urn:air:acme.com:agent:finance",
    "type": "application/a2a-agent-card+json",
    "digest": "sha256:56bbd2ff730d81a52951fc2f58809dfb086b4be7a82766dcc18cfe32ff6acbbd"
  },
  "signature": {
    "signer": "did:web:acme.com",
    "profile": "did-web-v1",
    "issuedAt": "2026-09-12T10:00:00Z",
    "jws": "JWS"
  },
  "additionalSignatures": [{"anything": "goes"}]
}`
	specPayload = `{"contributor":"did:web:acme.com","signature":{"issuedAt":"2026-09-12T10:00:00Z","profile":"did-web-v1","signer":"did:web:acme.com"},"subject":{"digest":"sha256:56bbd2ff730d81a52951fc2f58809dfb086b4be7a82766dcc18cfe32ff6acbbd","identifier":"urn:air:acme.com:agent:finance","type":"application/a2a-agent-card+json"}}`
)

// catalogWith is a catalog whose one entry carries manifest; its root is
// signed too when rootJWS is not empty.
func catalogWith(manifest, rootJWS string) string {
	root := ""
	if rootJWS != "" {
		root = `,"signature":{"signer":"did:web:acme.com","profile":"did-web-v1","issuedAt":"2026-09-12T10:00:00Z","jws":"` + rootJWS + `"},"additionalSignatures":[1]`
	}
	return `{"specVersion":"1.0","host":{"displayName":"Acme","identifier":"did:web:acme.com"},"entries":[` +
		`{"identifier":"urn:air:acme.com:agent:finance","type":"application/a2a-agent-card+json","url":"https://acme.com/finance.json",` +
		`"digest":"sha256:56bbd2ff730d81a52951fc2f58809dfb086b4be7a82766dcc18cfe32ff6acbbd","trustManifests":[` + manifest + `]}]` + root + `}`
}

// TestFindPayloads: the payload is the containing object without its own
// signature's jws and its own additionalSignatures, and only those (a
// catalog's payload keeps its manifests whole), in JCS form.
func TestFindPayloads(t *testing.T) {
	doc := catalogWith(specManifest, "ROOT")
	got, more := Find([]byte(doc))
	if more != 0 || len(got) != 2 {
		t.Fatalf("found %d signatures (%d more), want 2", len(got), more)
	}
	cat, man := got[0], got[1]
	if cat.Kind != KindCatalog || cat.Path != "/signature" || cat.Entry != -1 || cat.Signature.JWS != "ROOT" ||
		cat.HostIdentifier == nil || *cat.HostIdentifier != "did:web:acme.com" {
		t.Errorf("catalog signature %+v", cat)
	}
	wantRoot := `{"entries":[{"digest":"sha256:56bbd2ff730d81a52951fc2f58809dfb086b4be7a82766dcc18cfe32ff6acbbd",` +
		`"identifier":"urn:air:acme.com:agent:finance","trustManifests":[{"additionalSignatures":[{"anything":"goes"}],` +
		`"contributor":"did:web:acme.com","signature":{"issuedAt":"2026-09-12T10:00:00Z","jws":"JWS","profile":"did-web-v1",` +
		`"signer":"did:web:acme.com"},"subject":{"digest":"sha256:56bbd2ff730d81a52951fc2f58809dfb086b4be7a82766dcc18cfe32ff6acbbd",` +
		`"identifier":"urn:air:acme.com:agent:finance","type":"application/a2a-agent-card+json"}}],"type":"application/a2a-agent-card+json",` +
		`"url":"https://acme.com/finance.json"}],"host":{"displayName":"Acme","identifier":"did:web:acme.com"},` +
		`"signature":{"issuedAt":"2026-09-12T10:00:00Z","profile":"did-web-v1","signer":"did:web:acme.com"},"specVersion":"1.0"}`
	if diff := cmp.Diff(wantRoot, string(cat.Payload)); diff != "" {
		t.Errorf("catalog payload (-want +got):\n%s", diff)
	}
	if man.Kind != KindManifest || man.Path != "/entries/0/trustManifests/0/signature" || man.Entry != 0 ||
		man.Contributor != "did:web:acme.com" || man.Subject == nil || man.Subject.Digest == nil {
		t.Errorf("manifest signature %+v", man)
	}
	if diff := cmp.Diff(specPayload, string(man.Payload)); diff != "" {
		t.Errorf("manifest payload (-want +got):\n%s", diff)
	}

	// A repeated member name leaves no payload: the spec has parsers refuse it.
	dup := strings.Replace(specManifest, `"contributor": "did:web:acme.com",`, `"contributor": "a", "contributor": "did:web:acme.com",`, 1)
	got, _ = Find([]byte(catalogWith(dup, "")))
	if len(got) != 1 || got[0].Problem == "" || got[0].Payload != nil {
		t.Errorf("a manifest with a repeated member: %+v", got)
	}
	if err := Authenticate(got[0], nil, time.Now()); !errors.Is(err, ErrInvalid) {
		t.Errorf("Authenticate of it = %v, want invalid", err)
	}
}

func TestFindBounded(t *testing.T) {
	var ms []string
	for range MaxSignatures + 3 {
		ms = append(ms, specManifest)
	}
	got, more := Find([]byte(catalogWith(strings.Join(ms, ","), "")))
	if len(got) != MaxSignatures || more != 3 {
		t.Errorf("found %d and %d more, want %d and 3", len(got), more, MaxSignatures)
	}
}

// signedManifest returns the spec's manifest signed by s (its signer and
// contributor set to s's DID), as Find reads it from a catalog.
func signedManifest(t *testing.T, s *testSigner, edit func(sig map[string]any)) (Signed, string) {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(specManifest), &m); err != nil {
		t.Fatal(err)
	}
	m["contributor"] = s.DID
	sig := m["signature"].(map[string]any)
	sig["signer"] = s.DID
	sig["jws"] = "PLACEHOLDER" // outside the payload
	if edit != nil {
		edit(sig)
	}
	unsigned, _ := json.Marshal(m)
	found, _ := Find([]byte(catalogWith(string(unsigned), "")))
	if len(found) != 1 || found[0].Problem != "" {
		t.Fatalf("Find: %+v", found)
	}
	return found[0], string(unsigned)
}

func TestAuthenticate(t *testing.T) {
	s := newSigner(t, "acme.com")
	other := newSigner(t, "acme.com") // same DID, another key
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const typM = "ai-catalog-trust-manifest+jws"
	hdr := func(extra string) string {
		return `{"alg":"ES256","typ":"` + typM + `","kid":"` + s.Kid + `"` + extra + `}`
	}
	docWith := func(edit func(d map[string]any)) []byte {
		d := map[string]any{}
		_ = json.Unmarshal(s.document(), &d)
		edit(d)
		b, _ := json.Marshal(d)
		return b
	}
	for _, tc := range []struct {
		name string
		sig  func(m Signed) string // the jws
		edit func(sig map[string]any)
		doc  []byte
		now  time.Time
		want error // nil, ErrInvalid or ErrUnsupported
	}{
		{name: "go-jose signs, cardcrawl verifies", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) }},
		{name: "by hand", sig: func(m Signed) string { return s.signRaw(t, hdr(""), m.Payload) }},
		{name: "another key of the same DID", sig: func(m Signed) string { return other.Sign(t, typM, m.Payload) }, want: ErrInvalid},
		{name: "another object's signature", sig: func(m Signed) string { return s.sign(t, typM, []byte(`{}`)) }, want: ErrInvalid},
		{name: "a catalog's typ on a manifest", sig: func(m Signed) string { return s.sign(t, "ai-catalog+jws", m.Payload) }, want: ErrInvalid},
		{name: "no typ", sig: func(m Signed) string {
			return s.signRaw(t, `{"alg":"ES256","kid":"`+s.Kid+`"}`, m.Payload)
		}, want: ErrInvalid},
		{name: "alg none", sig: func(m Signed) string {
			return s.signRaw(t, `{"alg":"none","typ":"`+typM+`","kid":"`+s.Kid+`"}`, m.Payload)
		}, want: ErrInvalid},
		{name: "b64", sig: func(m Signed) string { return s.signRaw(t, hdr(`,"b64":true`), m.Payload) }, want: ErrInvalid},
		{name: "jwk in the header", sig: func(m Signed) string { return s.signRaw(t, hdr(`,"jwk":{}`), m.Payload) }, want: ErrInvalid},
		{name: "crit", sig: func(m Signed) string { return s.signRaw(t, hdr(`,"crit":["exp"],"exp":1`), m.Payload) }, want: ErrInvalid},
		{name: "kid of another DID", sig: func(m Signed) string {
			return s.signRaw(t, `{"alg":"ES256","typ":"`+typM+`","kid":"did:web:other.example#key-1"}`, m.Payload)
		}, want: ErrInvalid},
		{name: "an attached payload", sig: func(m Signed) string {
			j := s.sign(t, typM, m.Payload)
			h, sig, _ := strings.Cut(j, "..")
			return h + "." + base64.RawURLEncoding.EncodeToString(m.Payload) + "." + sig
		}, want: ErrInvalid},
		{name: "key only for authentication", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			doc: docWith(func(d map[string]any) { d["authentication"] = d["assertionMethod"]; delete(d, "assertionMethod") }), want: ErrInvalid},
		{name: "key embedded in assertionMethod", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			doc: docWith(func(d map[string]any) {
				d["assertionMethod"] = []any{map[string]any{"id": s.Kid, "controller": s.DID, "publicKeyJwk": s.jwk()}}
				delete(d, "verificationMethod")
			})},
		{name: "another controller", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			doc: docWith(func(d map[string]any) {
				d["verificationMethod"].([]any)[0].(map[string]any)["controller"] = "did:web:other.example"
			}), want: ErrInvalid},
		{name: "private key in the document", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			doc: docWith(func(d map[string]any) {
				d["verificationMethod"].([]any)[0].(map[string]any)["publicKeyJwk"].(map[string]any)["d"] = "AAAA"
			}), want: ErrInvalid},
		{name: "a document of another DID", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			doc: docWith(func(d map[string]any) { d["id"] = "did:web:other.example" }), want: ErrInvalid},
		{name: "expired", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			edit: func(sig map[string]any) { sig["expiresAt"] = "2026-11-30T00:00:00Z" }, want: ErrInvalid},
		{name: "not expired yet", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			edit: func(sig map[string]any) { sig["expiresAt"] = "2026-12-01T00:00:01+00:00" }},
		{name: "issued in the future", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			edit: func(sig map[string]any) { sig["issuedAt"] = "2026-12-02T00:00:00Z" }, want: ErrInvalid},
		{name: "another profile", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			edit: func(sig map[string]any) { sig["profile"] = "https://example.com/profiles/x509" }, want: ErrUnsupported},
		{name: "a path-based signer", sig: func(m Signed) string { return s.sign(t, typM, m.Payload) },
			edit: func(sig map[string]any) { sig["signer"] = "did:web:acme.com:users:alice" }, want: ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := signedManifest(t, s, tc.edit)
			m.Signature.JWS = tc.sig(m)
			doc := tc.doc
			if doc == nil {
				doc = s.document()
			}
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			err := Authenticate(m, doc, at)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Errorf("Authenticate = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSignedDocumentTampered: a catalog changed after signing fails, in
// any member the payload keeps; its additionalSignatures are free.
func TestSignedDocumentTampered(t *testing.T) {
	s := newSigner(t, "acme.com")
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m, unsigned := signedManifest(t, s, nil)
	jws := s.sign(t, "ai-catalog-trust-manifest+jws", m.Payload)
	signed := strings.Replace(unsigned, "PLACEHOLDER", jws, 1)
	for _, tc := range []struct {
		name, old, new string
		ok             bool
	}{
		{"as signed", "", "", true},
		{"additionalSignatures changed", `"anything":"goes"`, `"anything":"else"`, true},
		{"subject changed", `"urn:air:acme.com:agent:finance"`, `"urn:air:acme.com:agent:payroll"`, false},
		{"issuedAt changed", `"2026-09-12T10:00:00Z"`, `"2026-09-12T10:00:01Z"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := signed
			if tc.old != "" {
				if !strings.Contains(doc, tc.old) {
					t.Fatalf("%q not in %s", tc.old, doc)
				}
				doc = strings.Replace(doc, tc.old, tc.new, 1)
			}
			found, _ := Find([]byte(catalogWith(doc, "")))
			if len(found) != 1 {
				t.Fatalf("found %d", len(found))
			}
			if err := Authenticate(found[0], s.document(), now); (err == nil) != tc.ok {
				t.Errorf("Authenticate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestCoverage(t *testing.T) {
	str := func(s string) *string { return &s }
	base := func() Signed {
		return Signed{Kind: KindManifest, Signature: Signature{Signer: "did:web:acme.com"}, Contributor: "did:web:acme.com",
			Subject:     &Subject{Identifier: "urn:air:acme.com:mcp:x", Type: "t", Digest: str("sha256:aa"), Version: str("1")},
			EntryFields: EntryFields{Identifier: "urn:air:acme.com:mcp:x", Type: "t", Digest: str("sha256:aa"), Version: str("1"), URL: str("https://acme.com/x")}}
	}
	for _, tc := range []struct {
		name     string
		edit     func(s *Signed)
		verified bool
		ok       bool
	}{
		{"digest binding", nil, true, true},
		{"digest not verified", nil, false, false},
		{"signer not the contributor", func(s *Signed) { s.Contributor = "did:web:other.example" }, true, false},
		{"another identifier", func(s *Signed) { s.Subject.Identifier = "urn:air:acme.com:mcp:y" }, true, false},
		{"version only on the entry", func(s *Signed) { s.Subject.Version = nil }, true, false},
		{"digest only on the subject", func(s *Signed) { s.EntryFields.Digest = nil }, true, false},
		{"url binding", func(s *Signed) {
			s.Subject.Digest, s.EntryFields.Digest, s.Subject.URL = nil, nil, str("https://acme.com/x")
		}, false, true},
		{"url binding, another url", func(s *Signed) {
			s.Subject.Digest, s.EntryFields.Digest, s.Subject.URL = nil, nil, str("https://acme.com/X")
		}, false, false},
		{"url binding, http", func(s *Signed) {
			s.Subject.Digest, s.EntryFields.Digest, s.Subject.URL, s.EntryFields.URL = nil, nil, str("http://acme.com/x"), str("http://acme.com/x")
		}, false, false},
		{"no binding", func(s *Signed) { s.Subject.Digest, s.EntryFields.Digest = nil, nil }, false, false},
		{"no subject", func(s *Signed) { s.Subject = nil }, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			if tc.edit != nil {
				tc.edit(&s)
			}
			if err := ReleaseCovered(s, tc.verified); (err == nil) != tc.ok {
				t.Errorf("ReleaseCovered = %v, want ok %v", err, tc.ok)
			}
		})
	}
	host := "did:web:acme.com"
	if err := CatalogCovered(Signed{Signature: Signature{Signer: host}, HostIdentifier: &host}); err != nil {
		t.Errorf("CatalogCovered = %v", err)
	}
	if err := CatalogCovered(Signed{Signature: Signature{Signer: host}}); err == nil {
		t.Error("CatalogCovered without host.identifier passed")
	}
	other := "did:web:Acme.com"
	if err := CatalogCovered(Signed{Signature: Signature{Signer: host}, HostIdentifier: &other}); err == nil {
		t.Error("CatalogCovered compared without case")
	}
}

func TestPublisherAndDocumentURL(t *testing.T) {
	for id, want := range map[string]string{
		"urn:air:acme.com:agent:finance": "did:web:acme.com",
		"urn:air:ACME.com:agent:finance": "", // not a lower-case root did:web domain
		"urn:air:127.0.0.1:mcp:x":        "",
		"urn:mcp:acme.com:x":             "",
		"urn:air:acme.com":               "",
	} {
		if got := Publisher(id); got != want {
			t.Errorf("Publisher(%q) = %q, want %q", id, got, want)
		}
	}
	for did, want := range map[string]string{
		"did:web:acme.com":              "https://acme.com/.well-known/did.json",
		"did:web:xn--bcher-kva.example": "https://xn--bcher-kva.example/.well-known/did.json",
		"did:web:acme.com%3A8443":       "",
		"did:web:acme.com:user:alice":   "",
		"did:web:acme.com.":             "",
		"did:web:bücher.example":        "",
		"did:web:[::1]":                 "",
		"did:key:z6Mk":                  "",
	} {
		got, err := DocumentURL(did)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("DocumentURL(%q) = %q, %v; want %q", did, got, err, want)
		}
	}
}

// BenchmarkFindAndAuthenticate: what one signed manifest costs the crawl
// once its signer's DID document is at hand (read from a catalog of one
// entry, its payload built, the JWS checked).
func BenchmarkFindAndAuthenticate(b *testing.B) {
	s := newSigner(b, "acme.com")
	found, _ := Find([]byte(catalogWith(specManifest, "")))
	jws := s.sign(b, "ai-catalog-trust-manifest+jws", found[0].Payload)
	doc := []byte(catalogWith(strings.Replace(specManifest, `"jws": "JWS"`, `"jws": "`+jws+`"`, 1), ""))
	// The spec's manifest names did:web:acme.com; s is that signer.
	didDoc := s.document()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		found, _ := Find(doc)
		if err := Authenticate(found[0], didDoc, now); err != nil {
			b.Fatal(err)
		}
	}
}
