// Package trust checks the AI Catalog's signatures: a catalog's own (its
// snapshot) and its entries' Trust Manifests', under the did:web Signer
// Profile (did-web-v1) of the specification's Verification Procedures. It
// is pure: Find reads the signatures of a document and the payload each
// covers, Authenticate checks one against the signer's DID document, which
// the caller fetched (DocumentURL says where), and the coverage checks say
// what a verified signature endorses. Fetching lives in discover.
package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cardcrawl/cardcrawl/internal/jcs"
)

// Kind says what a signature signs.
type Kind int

const (
	// KindCatalog is a catalog root's signature: its snapshot.
	KindCatalog Kind = iota
	// KindManifest is a Trust Manifest's: an endorsement of an entry's release.
	KindManifest
)

// Signature is a Signature object as written.
type Signature struct {
	Signer, Profile, IssuedAt, ExpiresAt, JWS string
}

// Subject is a Trust Manifest's subject; a field not written is nil.
type Subject struct {
	Identifier, Type     string
	Digest, URL, Version *string
}

// EntryFields are the entry fields a manifest's subject must repeat, as
// written (nil when absent).
type EntryFields struct {
	Identifier, Type     string
	Digest, URL, Version *string
}

// Signed is one signature of a document and what it covers.
type Signed struct {
	Kind Kind
	// Path is the JSON pointer of the Signature object.
	Path string
	// Entry is the entry's index for a manifest, -1 for the catalog's.
	Entry     int
	Signature Signature
	// Payload is the JWS payload: the containing object without its
	// signature's jws and its own additionalSignatures, in its JCS form.
	Payload []byte
	// Problem, when not empty, says why the signature cannot be verified
	// at all (a malformed Signature object, a payload with no canonical
	// form); such a signature is invalid.
	Problem string

	// HostIdentifier is the catalog's host.identifier (KindCatalog), nil
	// when absent.
	HostIdentifier *string
	// Contributor, Subject and EntryFields are the manifest's (KindManifest).
	Contributor string
	Subject     *Subject
	EntryFields EntryFields
}

// MaxSignatures bounds what Find reads of one document: each costs a
// verification, and a stranger's catalog may hold any number.
const MaxSignatures = 64

// Find returns the signatures of an AI Catalog document in document order
// (the catalog's first), at most MaxSignatures, and how many more there
// were. A document that is not a JSON object has none.
func Find(doc []byte) (out []Signed, more int) {
	root, err := members(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))) // a BOM, which the catalog's parser forgives
	if err != nil {
		return nil, 0
	}
	add := func(s Signed) {
		if len(out) < MaxSignatures {
			out = append(out, s)
		} else {
			more++
		}
	}
	if sig, ok := root.get("signature"); ok {
		s := Signed{Kind: KindCatalog, Path: "/signature", Entry: -1}
		if host, ok := root.get("host"); ok {
			if hm, err := members(host); err == nil {
				s.HostIdentifier = hm.optString("identifier")
			}
		}
		s.fill(root, sig)
		add(s)
	}
	entries, ok := root.get("entries")
	if !ok {
		return out, more
	}
	var list []json.RawMessage
	if json.Unmarshal(entries, &list) != nil {
		return out, more
	}
	for i, raw := range list {
		em, err := members(raw)
		if err != nil {
			continue
		}
		tms, ok := em.get("trustManifests")
		if !ok {
			continue
		}
		var manifests []json.RawMessage
		if json.Unmarshal(tms, &manifests) != nil {
			continue
		}
		fields := EntryFields{Identifier: em.str("identifier"), Type: em.str("type"),
			Digest: em.optString("digest"), URL: em.optString("url"), Version: em.optString("version")}
		for j, mraw := range manifests {
			mm, err := members(mraw)
			if err != nil {
				continue
			}
			sig, ok := mm.get("signature")
			if !ok {
				continue // unsigned manifests endorse nothing to verify
			}
			s := Signed{Kind: KindManifest, Entry: i, EntryFields: fields, Contributor: mm.str("contributor"),
				Path: "/entries/" + strconv.Itoa(i) + "/trustManifests/" + strconv.Itoa(j) + "/signature"}
			if sub, ok := mm.get("subject"); ok {
				if sm, err := members(sub); err == nil {
					s.Subject = &Subject{Identifier: sm.str("identifier"), Type: sm.str("type"),
						Digest: sm.optString("digest"), URL: sm.optString("url"), Version: sm.optString("version")}
				}
			}
			s.fill(mm, sig)
			add(s)
		}
	}
	return out, more
}

// fill reads the Signature object sig of the containing object container
// and builds the payload.
func (s *Signed) fill(container objectMembers, sig json.RawMessage) {
	sm, err := members(sig)
	if err != nil {
		s.Problem = "signature is not an object"
		return
	}
	s.Signature = Signature{Signer: sm.str("signer"), Profile: sm.str("profile"), IssuedAt: sm.str("issuedAt"), JWS: sm.str("jws")}
	if e := sm.optString("expiresAt"); e != nil {
		s.Signature.ExpiresAt = *e
	}
	for _, name := range []string{"signer", "profile", "issuedAt", "jws"} {
		if sm.optString(name) == nil {
			s.Problem = "signature has no " + name + " string"
			return
		}
	}
	if v, ok := sm.get("expiresAt"); ok && sm.optString("expiresAt") == nil {
		s.Problem = "signature expiresAt is " + string(v) + ", not a string"
		return
	}
	// The payload: the container without its own additionalSignatures
	// (outside it, so more signatures can be added later), its signature
	// without jws.
	var sigOut []member
	for _, f := range sm {
		if f.name != "jws" {
			sigOut = append(sigOut, f)
		}
	}
	var out []member
	for _, m := range container {
		switch m.name {
		case "additionalSignatures":
		case "signature":
			out = append(out, member{name: m.name, raw: objectMembers(sigOut).json()})
		default:
			out = append(out, m)
		}
	}
	payload, err := jcs.Canonicalize(objectMembers(out).json())
	if err != nil {
		// Repeated member names among them: the spec has parsers refuse
		// them rather than pick one.
		s.Problem = "the signed object has no canonical form: " + err.Error()
		return
	}
	s.Payload = payload
}

// member is one member of a JSON object, its value verbatim.
type member struct {
	name string
	raw  json.RawMessage
}

// objectMembers are an object's members in document order, repeats kept.
type objectMembers []member

var errNotObject = errors.New("not a json object")

// members reads the members of the JSON object b.
func members(b []byte) (objectMembers, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var out objectMembers
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotObject, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %w", errNotObject, err)
		}
		out = append(out, member{name: k.(string), raw: raw})
	}
	return out, nil
}

// json writes the members back as one JSON object, in their order,
// repeats kept (JCS then refuses them).
func (m objectMembers) json() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		n, _ := json.Marshal(f.name)
		b.Write(n)
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// get returns the value of the last member named name (as the catalog's
// parser reads repeats; a signed object with repeats has no payload).
func (m objectMembers) get(name string) (json.RawMessage, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].name == name {
			return m[i].raw, true
		}
	}
	return nil, false
}

// optString is the string value of name, nil when absent or not a string.
func (m objectMembers) optString(name string) *string {
	raw, ok := m.get(name)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// str is optString's value, "" when absent.
func (m objectMembers) str(name string) string {
	if s := m.optString(name); s != nil {
		return *s
	}
	return ""
}
