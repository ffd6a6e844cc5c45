package discover_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/catalog/trust"
	"github.com/cardcrawl/cardcrawl/catalog/trust/trusttest"
	"github.com/cardcrawl/cardcrawl/discover"
)

// signAt fills the placeholder jws of the signature at path in doc with
// s's signature over the payload trust.Find builds for it.
func signAt(t *testing.T, s *trusttest.Signer, doc, path, placeholder string) string {
	t.Helper()
	found, _ := trust.Find([]byte(doc))
	for _, f := range found {
		if f.Path == path {
			typ := "ai-catalog-trust-manifest+jws"
			if f.Kind == trust.KindCatalog {
				typ = "ai-catalog+jws"
			}
			return strings.Replace(doc, placeholder, s.Sign(t, typ, f.Payload), 1)
		}
	}
	t.Fatalf("no signature at %s", path)
	return ""
}

// TestCatalogSignatures crawls a catalog signed by its operator whose
// entries carry trust manifests: by the publisher, by an assessor, one
// whose subject is another release, one signed with a key the DID
// document does not hold, and one whose signer's DID document is missing.
// Each signature's finding says what it establishes, and the DID documents
// are fetched as observations of their own.
func TestCatalogSignatures(t *testing.T) {
	pub, assessor, gone := trusttest.New(t, "signed.example"), trusttest.New(t, "assessor.example"), trusttest.New(t, "gone.example")
	impostor := trusttest.New(t, "signed.example") // the publisher's DID, another key
	// Served byte for byte as hashed, its newline included.
	card := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"example.signed/a","version":"1.0.0","description":"a","remotes":[{"type":"streamable-http","url":"https://mcp.signed.example/a"}]}` + "\n"
	sum := sha256.Sum256([]byte(card))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	manifest := func(contributor, subjectDigest, placeholder string) string {
		return `{"contributor":"` + contributor + `","subject":{"identifier":"urn:air:signed.example:mcp:a","type":"application/mcp-server-card+json",` +
			`"digest":"` + subjectDigest + `"},"signature":{"signer":"` + contributor + `","profile":"did-web-v1",` +
			`"issuedAt":"2026-11-01T00:00:00Z","jws":"` + placeholder + `"}}`
	}
	manifests := []string{
		manifest(pub.DID, digest, "JWS0"),
		manifest(assessor.DID, digest, "JWS1"),
		manifest(pub.DID, "sha256:"+strings.Repeat("0", 64), "JWS2"),
		manifest(pub.DID, digest, "JWS3"),
		manifest(gone.DID, digest, "JWS4"),
	}
	doc := `{"specVersion":"1.0","host":{"displayName":"Signed","identifier":"` + pub.DID + `"},"entries":[` +
		`{"identifier":"urn:air:signed.example:mcp:a","type":"application/mcp-server-card+json","url":"https://signed.example/card.json",` +
		`"digest":"` + digest + `","trustManifests":[` + strings.Join(manifests, ",") + `]}],` +
		`"signature":{"signer":"` + pub.DID + `","profile":"did-web-v1","issuedAt":"2026-11-01T00:00:00Z","jws":"ROOT"}}`
	doc = signAt(t, pub, doc, "/entries/0/trustManifests/0/signature", "JWS0")
	doc = signAt(t, assessor, doc, "/entries/0/trustManifests/1/signature", "JWS1")
	doc = signAt(t, pub, doc, "/entries/0/trustManifests/2/signature", "JWS2")
	doc = signAt(t, impostor, doc, "/entries/0/trustManifests/3/signature", "JWS3")
	doc = signAt(t, gone, doc, "/entries/0/trustManifests/4/signature", "JWS4")
	doc = signAt(t, pub, doc, "/signature", "ROOT") // last: the snapshot covers the manifests' signatures

	archive := "-- signed.example/.well-known/ai-catalog.json --\n" + doc + "\n" +
		"-- signed.example/card.json --\n" + card +
		"-- signed.example/.well-known/did.json --\n" + string(pub.Document()) +
		"\n-- assessor.example/.well-known/did.json --\n" + string(assessor.Document()) + "\n"
	w := newWorld(t, []byte(archive))
	w.crawl(context.Background(), w.options(), "signed.example")

	fs := w.catalogFindings("https://signed.example/.well-known/ai-catalog.json")
	type f struct{ Severity, Code, Path, Says string }
	var got []f
	for _, x := range fs {
		if strings.HasPrefix(x.Code, "signature") || strings.HasPrefix(x.Code, "entry_digest") {
			got = append(got, f{x.Severity, x.Code, x.Path, x.Message})
		}
	}
	m := func(i string) string { return "/entries/0/trustManifests/" + i + "/signature" }
	want := []f{
		{"info", discover.CodeSignatureVerified, "/signature", "signed by its operator did:web:signed.example"},
		{"info", discover.CodeSignatureVerified, m("0"), "endorsed by its publisher did:web:signed.example"},
		{"info", discover.CodeSignatureVerified, m("1"), "endorsed by did:web:assessor.example, which is not its publisher"},
		{"warning", discover.CodeSignatureNotEndorsement, m("2"), "the subject's digest is not the entry's"},
		{"error", discover.CodeSignatureInvalid, m("3"), "does not verify"},
		{"warning", discover.CodeSignatureUnverifiable, m("4"), "DID document of did:web:gone.example could not be read"},
	}
	if len(got) != len(want) {
		t.Fatalf("signature findings:\n%+v", fs)
	}
	for i := range want {
		if got[i].Severity != want[i].Severity || got[i].Code != want[i].Code || got[i].Path != want[i].Path ||
			!strings.Contains(got[i].Says, want[i].Says) {
			t.Errorf("finding %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// One fetch per signer, recorded like every other.
	dids := w.observationClasses("signed.example", "did_document")
	if diff := cmp.Diff(map[string]string{
		"https://signed.example/.well-known/did.json":   "",
		"https://assessor.example/.well-known/did.json": "",
		"https://gone.example/.well-known/did.json":     "http_404",
	}, dids); diff != "" {
		t.Errorf("DID document fetches (-want +got):\n%s", diff)
	}
}

// TestSignatureBounds: a catalog can name any number of signers and
// signatures, and point a signer's DID document anywhere; the crawl reads
// at most trust.MaxSignatures signatures a document and fetches at most 4
// DID documents a domain, each through the guarded client, and says so.
func TestSignatureBounds(t *testing.T) {
	const n = trust.MaxSignatures + 6
	var manifests []string
	signers := []string{"did:web:169.254.169.254", "did:web:inward.example"} // an address; a document that redirects inward
	for i := range 8 {
		signers = append(signers, fmt.Sprintf("did:web:s%d.example", i))
	}
	for i := range n {
		s := signers[i%len(signers)]
		manifests = append(manifests, `{"contributor":"`+s+`","subject":{"identifier":"urn:air:many.example:mcp:a","type":"application/mcp-server-card+json","url":"https://many.example/card.json"},`+
			`"signature":{"signer":"`+s+`","profile":"did-web-v1","issuedAt":"2026-11-01T00:00:00Z","jws":"e30..AAAA"}}`)
	}
	card := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"example.many/a","version":"1.0.0","description":"a"}` + "\n"
	archive := "-- many.example/.well-known/ai-catalog.json --\n" +
		`{"specVersion":"1.0","entries":[{"identifier":"urn:air:many.example:mcp:a","type":"application/mcp-server-card+json",` +
		`"url":"https://many.example/card.json","trustManifests":[` + strings.Join(manifests, ",") + "]}]}\n" +
		"-- many.example/card.json --\n" + card +
		"-- inward.example/.well-known/did.json --\nHTTP 302\nLocation: https://127.0.0.1/did.json\n\n"
	w := newWorld(t, []byte(archive))
	w.crawl(context.Background(), w.options(), "many.example")

	fs := w.catalogFindings("https://many.example/.well-known/ai-catalog.json")
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Code]++
		if f.Path == "/entries/0/trustManifests/0/signature" && !strings.Contains(f.Message, "IP address") {
			t.Errorf("the address signer: %s %s", f.Code, f.Message)
		}
	}
	// Each checked signature has one verdict (none verifies: the JWS is no
	// signature), and the rest are counted once.
	if got := counts[discover.CodeSignatureInvalid] + counts[discover.CodeSignatureUnverifiable]; got != trust.MaxSignatures ||
		counts[discover.CodeSignaturesTruncated] != 1 || counts[discover.CodeSignatureVerified] != 0 {
		t.Errorf("finding counts %v, want %d verdicts and one signatures_truncated", counts, trust.MaxSignatures)
	}
	dids := w.observationClasses("many.example", "did_document")
	if len(dids) != 4 {
		t.Errorf("%d DID documents fetched, want 4: %v", len(dids), dids)
	}
	if c, ok := dids["https://inward.example/.well-known/did.json"]; !ok || c != "blocked_address" {
		t.Errorf("the document that redirects inward: %q (fetched %v), want blocked_address", c, ok)
	}
	if _, ok := dids["https://169.254.169.254/.well-known/did.json"]; ok {
		t.Error("an address signer's document was fetched")
	}
}
