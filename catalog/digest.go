package catalog

import (
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// Digest is an entry's digest ("sha256:…"): for an entry by url, the hash
// of the exact bytes served there; for inline data, of the data's JSON
// Canonicalization Scheme form (RFC 8785) in UTF-8. The zero Digest is
// none, or one that cannot be checked (the parser said why).
type Digest struct {
	Algorithm string // as written, lower case: sha256, sha384, …
	Hex       string // lower-case hex, of the algorithm's length
}

// IsZero says there is nothing to check.
func (d Digest) IsZero() bool { return d.Algorithm == "" }

func (d Digest) String() string { return d.Algorithm + ":" + d.Hex }

// Matches hashes b with the digest's algorithm and compares.
func (d Digest) Matches(b []byte) bool { return !d.IsZero() && d.Of(b) == d }

// Of is the digest of b under d's algorithm: what the entry should have
// said, for a message.
func (d Digest) Of(b []byte) Digest {
	h := digestAlgorithms[d.Algorithm]
	if h == nil {
		return Digest{}
	}
	w := h()
	w.Write(b)
	return Digest{Algorithm: d.Algorithm, Hex: hex.EncodeToString(w.Sum(nil))}
}

// digestAlgorithms are the ones cardcrawl checks: SHA-256 and stronger, as
// the spec asks producers to use.
var digestAlgorithms = map[string]func() hash.Hash{
	"sha256":   sha256.New,
	"sha384":   sha512.New384,
	"sha512":   sha512.New,
	"sha3-256": func() hash.Hash { return sha3.New256() },
	"sha3-384": func() hash.Hash { return sha3.New384() },
	"sha3-512": func() hash.Hash { return sha3.New512() },
}

// weakDigests are shorter than SHA-256, which consumers MUST reject.
var weakDigests = map[string]bool{
	"md5": true, "sha1": true, "sha-1": true, "sha224": true, "sha-224": true, "sha512-224": true, "sha3-224": true,
}

// parseDigest reads a digest member as written. ok false means nothing can
// be checked; code and msg then say why (code "" for a value that only
// needs no finding).
func parseDigest(s string) (d Digest, code, msg string) {
	alg, hx, found := strings.Cut(s, ":")
	switch {
	case !found || alg == "" || hx == "":
		return Digest{}, CodeDigestMalformed, "digest " + quoteShort(s) + " is not algorithm:hex; not checked"
	case weakDigests[strings.ToLower(alg)]:
		return Digest{}, CodeDigestWeak, "digest algorithm " + quoteShort(alg) + " is weaker than SHA-256, which consumers must reject; not checked"
	}
	h := digestAlgorithms[alg]
	if h == nil {
		return Digest{}, CodeDigestUnsupported, "digest algorithm " + quoteShort(alg) + " is not one cardcrawl checks (sha256, sha384, sha512, sha3-256, sha3-384, sha3-512); not checked"
	}
	if len(hx) != 2*h().Size() || strings.Trim(hx, "0123456789abcdef") != "" {
		return Digest{}, CodeDigestMalformed, "digest " + quoteShort(s) + " is not " + alg + " followed by lower-case hex of its length; not checked"
	}
	return Digest{Algorithm: alg, Hex: hx}, "", ""
}

// quoteShort quotes a value for a message, cut to a readable length.
func quoteShort(s string) string {
	const most = 80
	if r := []rune(s); len(r) > most {
		s = string(r[:most]) + "…"
	}
	return strconv.Quote(s)
}
