package simweb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cardcrawl/cardcrawl/catalog/trust"
)

// SignedDemoDomain is the demo's signed catalog: signed by its operator,
// its entries' releases endorsed by their publisher (did:web:signed.example)
// in trust manifests, one card pinned by digest and served as pinned, the
// other changed since it was pinned, so its endorsement no longer covers
// what is served. The key is made when the web is built; the DID document
// at https://signed.example/.well-known/did.json publishes it.
const SignedDemoDomain = "signed.example"

// addSignedDemo serves SignedDemoDomain.
func addSignedDemo(w *Web) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("simweb: signed demo: %w", err)
	}
	archive, err := signedArchive(key)
	if err != nil {
		return fmt.Errorf("simweb: signed demo: %w", err)
	}
	return w.AddFixtures(archive)
}

func signedArchive(key *ecdsa.PrivateKey) ([]byte, error) {
	const did = "did:web:" + SignedDemoDomain
	card := func(name, version, description string) string {
		return `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",` +
			`"name":"example.signed/` + name + `","version":"` + version + `","description":"` + description + `",` +
			`"remotes":[{"type":"streamable-http","url":"https://mcp.signed.example/` + name + `"}]}` + "\n"
	}
	digest := func(b string) string { s := sha256.Sum256([]byte(b)); return "sha256:" + hex.EncodeToString(s[:]) }
	notes := card("notes", "1.2.0", "Notes; its release is signed by its publisher")
	filesPinned := card("files", "2.0.0", "Files")
	filesServed := card("files", "2.0.1", "Files, changed after the catalog pinned it")
	entry := func(name, pinned, placeholder string) string {
		id := "urn:air:" + SignedDemoDomain + ":mcp:" + name
		const typ = "application/mcp-server-card+json"
		return `{"identifier":"` + id + `","type":"` + typ + `","url":"https://signed.example/cards/` + name + `.json",` +
			`"digest":"` + pinned + `","trustManifests":[{"contributor":"` + did + `","subject":{"identifier":"` + id +
			`","type":"` + typ + `","digest":"` + pinned + `"},"signature":{"signer":"` + did + `","profile":"did-web-v1",` +
			`"issuedAt":"2026-11-01T00:00:00Z","jws":"` + placeholder + `"}}]}`
	}
	doc := `{"specVersion":"1.0","host":{"displayName":"Signed Example","identifier":"` + did + `"},"entries":[` +
		entry("notes", digest(notes), "JWS-NOTES") + "," + entry("files", digest(filesPinned), "JWS-FILES") + `],` +
		`"signature":{"signer":"` + did + `","profile":"did-web-v1","issuedAt":"2026-11-01T00:00:00Z","jws":"JWS-ROOT"}}`
	// The manifests first: the catalog's snapshot covers their signatures.
	for _, step := range []struct{ path, placeholder string }{
		{"/entries/0/trustManifests/0/signature", "JWS-NOTES"},
		{"/entries/1/trustManifests/0/signature", "JWS-FILES"},
		{"/signature", "JWS-ROOT"},
	} {
		found, _ := trust.Find([]byte(doc))
		var s *trust.Signed
		for i := range found {
			if found[i].Path == step.path {
				s = &found[i]
			}
		}
		if s == nil || s.Problem != "" {
			return nil, fmt.Errorf("no signable signature at %s", step.path)
		}
		typ := "ai-catalog-trust-manifest+jws"
		if s.Kind == trust.KindCatalog {
			typ = "ai-catalog+jws"
		}
		jws, err := signDetached(key, did+"#key-1", typ, s.Payload)
		if err != nil {
			return nil, err
		}
		doc = strings.Replace(doc, step.placeholder, jws, 1)
	}
	pubKey, err := key.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	enc := base64.RawURLEncoding.EncodeToString
	didDoc, err := json.Marshal(map[string]any{
		"@context": []string{"https://www.w3.org/ns/did/v1"},
		"id":       did,
		"verificationMethod": []any{map[string]any{"id": did + "#key-1", "type": "JsonWebKey2020", "controller": did,
			"publicKeyJwk": map[string]string{"kty": "EC", "crv": "P-256", "x": enc(pubKey[1:33]), "y": enc(pubKey[33:])}}},
		"assertionMethod": []string{did + "#key-1"},
	})
	if err != nil {
		return nil, err
	}
	return []byte("-- signed.example/.well-known/ai-catalog.json --\n" + doc + "\n" +
		"-- signed.example/.well-known/did.json --\n" + string(didDoc) + "\n" +
		"-- signed.example/cards/notes.json --\n" + notes +
		"-- signed.example/cards/files.json --\n" + filesServed +
		"-- mcp.signed.example/notes --\nSIMWEB-MCP go-sdk-stateful name=example.signed/notes version=1.2.0 tools=1\n" +
		"-- mcp.signed.example/files --\nSIMWEB-MCP mcp-go-streamable name=example.signed/files version=2.0.1 tools=3\n"), nil
}

// signDetached is an ES256 JWS over payload with its payload left out of
// the compact form (RFC 7515, Appendix F), as AI Catalog signatures are.
func signDetached(key *ecdsa.PrivateKey, kid, typ string, payload []byte) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "ES256", "typ": typ, "kid": kid})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding.EncodeToString
	h := enc(header)
	sum := sha256.Sum256([]byte(h + "." + enc(payload)))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return h + ".." + enc(sig), nil
}
