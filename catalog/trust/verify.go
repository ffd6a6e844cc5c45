package trust

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ProfileDIDWeb is the one signer profile cardcrawl implements.
const ProfileDIDWeb = "did-web-v1"

var (
	// ErrInvalid: the signature does not verify (its JWS, its key, its
	// times, its signer), so it endorses nothing.
	ErrInvalid = errors.New("signature invalid")
	// ErrUnsupported: the signature names a profile cardcrawl does not
	// implement; the spec forbids trying another.
	ErrUnsupported = errors.New("signature profile not supported")
)

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// clockSkew is how far ahead of our clock an issuedAt may be: the spec
// allows a small tolerance.
const clockSkew = 5 * time.Minute

// DocumentURL is where the DID document of a root did:web signer is: the
// https URL of its domain's /.well-known/did.json. Any other signer fails
// the did:web Signer Profile.
func DocumentURL(signer string) (string, error) {
	domain, ok := strings.CutPrefix(signer, "did:web:")
	if !ok {
		return "", invalid("signer %q is not a did:web DID", signer)
	}
	switch {
	case domain == "" || strings.ContainsAny(domain, ":/?#%"):
		// A colon starts a path (did:web:host:path), %3A a port.
		return "", invalid("signer %q is not a root did:web DID (no path, port or query)", signer)
	case !utf8.ValidString(domain) || strings.ContainsFunc(domain, func(r rune) bool { return r > 0x7e || r <= ' ' }):
		return "", invalid("signer %q is not ASCII (U-labels are not allowed; A-labels are)", signer)
	case strings.ToLower(domain) != domain:
		return "", invalid("signer %q is not lower case", signer)
	case strings.HasSuffix(domain, "."):
		return "", invalid("signer %q ends in a dot", signer)
	case !strings.Contains(domain, "."):
		return "", invalid("signer %q names no public domain", signer)
	}
	if _, err := netip.ParseAddr(strings.Trim(domain, "[]")); err == nil {
		return "", invalid("signer %q names an IP address", signer)
	}
	return "https://" + domain + "/.well-known/did.json", nil
}

// Precheck is what Authenticate checks before it needs the signer's DID
// document: the Signature object, its profile, its times and its signer.
// A caller fetches the document only for a signature that passes.
func Precheck(s Signed, now time.Time) error {
	if s.Problem != "" {
		return invalid("%s", s.Problem)
	}
	sig := s.Signature
	if sig.Profile != ProfileDIDWeb {
		return fmt.Errorf("%w: %q (cardcrawl verifies %s only)", ErrUnsupported, sig.Profile, ProfileDIDWeb)
	}
	if err := checkTimes(sig, now); err != nil {
		return err
	}
	_, err := DocumentURL(sig.Signer)
	return err
}

// Authenticate checks s under its profile, at now, against the DID
// document of its signer (didDoc, as fetched from DocumentURL): Precheck,
// then the detached JWS and the key the document authorises for
// assertions. nil means the signer is authenticated and the endorsement
// current; what it endorses is the coverage checks' to say. Errors wrap
// ErrInvalid or ErrUnsupported.
func Authenticate(s Signed, didDoc []byte, now time.Time) error {
	if err := Precheck(s, now); err != nil {
		return err
	}
	sig := s.Signature
	h, signingInput, rawSig, err := parseJWS(sig.JWS, s.Payload)
	if err != nil {
		return err
	}
	want := "ai-catalog-trust-manifest+jws"
	if s.Kind == KindCatalog {
		want = "ai-catalog+jws"
	}
	if err := h.check(sig.Signer, want); err != nil {
		return err
	}
	key, err := assertionKey(didDoc, sig.Signer, h.Kid)
	if err != nil {
		return err
	}
	if len(rawSig) != 64 {
		return invalid("an ES256 signature is 64 bytes, not %d", len(rawSig))
	}
	digest := sha256.Sum256([]byte(signingInput))
	r, ss := new(big.Int).SetBytes(rawSig[:32]), new(big.Int).SetBytes(rawSig[32:])
	if !ecdsa.Verify(key, digest[:], r, ss) {
		return invalid("the JWS does not verify over the signed object with key %s", h.Kid)
	}
	return nil
}

func checkTimes(sig Signature, now time.Time) error {
	issued, err := time.Parse(time.RFC3339, sig.IssuedAt)
	if err != nil {
		return invalid("issuedAt %q is not an RFC 3339 time", sig.IssuedAt)
	}
	if now.Add(clockSkew).Before(issued) {
		return invalid("issued at %s, which has not come yet", sig.IssuedAt)
	}
	if sig.ExpiresAt == "" {
		return nil
	}
	expires, err := time.Parse(time.RFC3339, sig.ExpiresAt)
	if err != nil {
		return invalid("expiresAt %q is not an RFC 3339 time", sig.ExpiresAt)
	}
	if !expires.After(issued) {
		return invalid("expiresAt %s is not after issuedAt %s", sig.ExpiresAt, sig.IssuedAt)
	}
	if !now.Before(expires) {
		return invalid("expired at %s", sig.ExpiresAt)
	}
	return nil
}

// header is a JWS protected header, with the members the profile rules on.
type header struct {
	Alg, Typ, Kid string
	names         []string
}

// parseJWS splits a detached compact JWS (header..signature) and returns
// its header, the signing input rebuilt with payload, and the signature.
func parseJWS(jws string, payload []byte) (h header, signingInput string, sig []byte, err error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 || parts[1] != "" {
		return h, "", nil, invalid("jws is not a detached compact JWS (header..signature)")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return h, "", nil, invalid("the JWS header is not base64url: %v", err)
	}
	hm, err := members(hb)
	if err != nil {
		return h, "", nil, invalid("the JWS header is not a JSON object")
	}
	for _, m := range hm {
		if slices.Contains(h.names, m.name) {
			return h, "", nil, invalid("the JWS header names %q twice", m.name)
		}
		h.names = append(h.names, m.name)
	}
	h.Alg, h.Typ, h.Kid = hm.str("alg"), hm.str("typ"), hm.str("kid")
	if sig, err = base64.RawURLEncoding.DecodeString(parts[2]); err != nil {
		return h, "", nil, invalid("the JWS signature is not base64url: %v", err)
	}
	return h, parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload), sig, nil
}

// check applies the spec's and the profile's header rules.
func (h header) check(signer, typ string) error {
	switch {
	case h.Alg == "" || h.Alg == "none":
		return invalid("the JWS header's alg is %q", h.Alg)
	case h.Alg != "ES256":
		return invalid("alg %s: the did:web profile allows ES256 only", h.Alg)
	case h.Typ != typ:
		return invalid("the JWS header's typ is %q, not %q", h.Typ, typ)
	}
	for _, n := range h.names {
		switch n {
		case "b64":
			return invalid("the JWS header has b64 (unencoded payloads are not used)")
		case "jku", "jwk", "x5u", "x5c":
			return invalid("the JWS header names key material (%s); the key comes from the DID document only", n)
		case "crit":
			return invalid("the JWS header has critical parameters cardcrawl does not understand")
		}
	}
	frag, ok := strings.CutPrefix(h.Kid, signer+"#")
	if !ok || frag == "" {
		return invalid("kid %q is not the signer %s followed by a #fragment", h.Kid, signer)
	}
	return nil
}

// assertionKey finds the one verification method with id kid that the DID
// document of signer authorises for assertions, and its P-256 key.
func assertionKey(doc []byte, signer, kid string) (*ecdsa.PublicKey, error) {
	dm, err := members(doc)
	if err != nil {
		return nil, invalid("the DID document is not a JSON object")
	}
	if id := dm.str("id"); id != signer {
		return nil, invalid("the DID document's id is %q, not the signer %s", id, signer)
	}
	resolve := func(id string) string {
		if strings.HasPrefix(id, "#") {
			return signer + id // a relative DID URL
		}
		return id
	}
	var methods []json.RawMessage
	if raw, ok := dm.get("verificationMethod"); ok {
		_ = json.Unmarshal(raw, &methods)
	}
	var assertions []json.RawMessage
	if raw, ok := dm.get("assertionMethod"); ok {
		_ = json.Unmarshal(raw, &assertions)
	}
	var found []objectMembers
	for _, a := range assertions {
		var ref string
		if json.Unmarshal(a, &ref) == nil {
			if resolve(ref) != kid {
				continue
			}
			for _, m := range methods {
				if mm, err := members(m); err == nil && resolve(mm.str("id")) == kid {
					found = append(found, mm)
				}
			}
			continue
		}
		if mm, err := members(a); err == nil && resolve(mm.str("id")) == kid {
			found = append(found, mm) // embedded in assertionMethod
		}
	}
	switch len(found) {
	case 0:
		return nil, invalid("the DID document does not authorise %s for assertions (assertionMethod)", kid)
	case 1:
	default:
		return nil, invalid("the DID document authorises %d verification methods with id %s, not one", len(found), kid)
	}
	vm := found[0]
	if c := vm.str("controller"); c != signer {
		return nil, invalid("verification method %s is controlled by %q, not the signer", kid, c)
	}
	raw, ok := vm.get("publicKeyJwk")
	if !ok {
		return nil, invalid("verification method %s has no publicKeyJwk", kid)
	}
	return p256Key(raw)
}

// p256Key reads a public JWK that must be an ES256 verification key.
func p256Key(raw json.RawMessage) (*ecdsa.PublicKey, error) {
	var jwk struct {
		Kty, Crv, X, Y, D, Alg, Use string
		KeyOps                      []string `json:"key_ops"`
	}
	if err := json.Unmarshal(raw, &jwk); err != nil {
		return nil, invalid("publicKeyJwk is not a JWK: %v", err)
	}
	switch {
	case jwk.Kty != "EC" || jwk.Crv != "P-256":
		return nil, invalid("publicKeyJwk is kty %q crv %q, not an EC P-256 key", jwk.Kty, jwk.Crv)
	case jwk.D != "":
		return nil, invalid("publicKeyJwk holds private key material")
	case jwk.Alg != "" && jwk.Alg != "ES256":
		return nil, invalid("publicKeyJwk is for alg %s, not ES256", jwk.Alg)
	case jwk.Use != "" && jwk.Use != "sig":
		return nil, invalid("publicKeyJwk is for use %q, not sig", jwk.Use)
	case jwk.KeyOps != nil && !slices.Contains(jwk.KeyOps, "verify"):
		return nil, invalid("publicKeyJwk's key_ops do not allow verify")
	}
	x, errX := base64.RawURLEncoding.DecodeString(jwk.X)
	y, errY := base64.RawURLEncoding.DecodeString(jwk.Y)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return nil, invalid("publicKeyJwk's x and y are not 32-byte base64url coordinates")
	}
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, invalid("publicKeyJwk is not a point on P-256: %v", err)
	}
	return key, nil
}

// CatalogCovered is the did:web Catalog Profile's operator attribution: a
// verified catalog signature endorses the snapshot as its operator's when
// host.identifier is exactly the signer.
func CatalogCovered(s Signed) error {
	switch {
	case s.HostIdentifier == nil:
		return invalid("the catalog has no host.identifier to attribute the snapshot to")
	case *s.HostIdentifier != s.Signature.Signer:
		return invalid("host.identifier is %q, not the signer %s", *s.HostIdentifier, s.Signature.Signer)
	}
	return nil
}

// ReleaseCovered is the spec's Entry Release Coverage: the signed subject
// is the entry's release. digestVerified says the entry's artifact was
// read and matched its digest (needed when the subject has one).
func ReleaseCovered(s Signed, digestVerified bool) error {
	e, sub := s.EntryFields, s.Subject
	same := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	switch {
	case s.Signature.Signer != s.Contributor:
		return invalid("signer %s is not the manifest's contributor %q", s.Signature.Signer, s.Contributor)
	case sub == nil:
		return invalid("the manifest has no subject")
	case sub.Identifier != e.Identifier || sub.Type != e.Type:
		return invalid("the subject (%q, %q) is not the entry (%q, %q)", sub.Identifier, sub.Type, e.Identifier, e.Type)
	case !same(sub.Version, e.Version):
		return invalid("the subject's version is not the entry's")
	case !same(sub.Digest, e.Digest):
		return invalid("the subject's digest is not the entry's")
	case sub.Digest == nil && sub.URL == nil:
		return invalid("the subject binds neither a digest nor a url")
	case sub.Digest != nil && !digestVerified:
		return invalid("the entry's artifact was not verified against its digest")
	}
	if sub.URL != nil {
		u, err := url.Parse(*sub.URL)
		if err != nil || u.Scheme != "https" || !u.IsAbs() {
			return invalid("the subject's url %q is not an absolute https URL", *sub.URL)
		}
		if e.URL == nil || *e.URL != *sub.URL {
			return invalid("the subject's url is not the entry's")
		}
	}
	return nil
}

// Publisher is the signer the did:web Publisher Profile requires for an
// entry: did:web: and the {publisher} of its urn:air identifier; "" when
// the identifier is not urn:air or its publisher is no root did:web domain.
func Publisher(identifier string) string {
	rest, ok := strings.CutPrefix(identifier, "urn:air:")
	if !ok {
		return ""
	}
	pub, _, ok := strings.Cut(rest, ":")
	if !ok || pub == "" {
		return ""
	}
	did := "did:web:" + pub
	if _, err := DocumentURL(did); err != nil {
		return ""
	}
	return did
}
