package namespace_test

import (
	"crypto/ed25519"
	"crypto/elliptic"
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/registry/namespace"
)

// proofRecord is a record as the Registry's docs write it.
func proofRecord(alg, key string) string { return "v=MCPv1; k=" + alg + "; p=" + key }

var base64Chars = regexp.MustCompile(`^[A-Za-z0-9+/=]+$`)

// FuzzParseProofs checks the mcp-registry-auth record reader (the HTTP body
// and each DNS TXT string): a proof is valid exactly when it names no
// problem, a valid proof's key really is a key of its algorithm, the number
// of proofs is bounded by the text's length, and the proofs written back as
// records read back the same.
func FuzzParseProofs(f *testing.F) {
	ed := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey))
	p := elliptic.P384().Params()
	ec := base64.StdEncoding.EncodeToString(elliptic.MarshalCompressed(elliptic.P384(), p.Gx, p.Gy))
	for _, s := range []string{
		// The record format of the Registry's publishing docs, with real keys.
		proofRecord("ed25519", ed), proofRecord("ecdsap384", ec), proofRecord("ed25519", ed) + "\n" + proofRecord("ecdsap384", ec),
		"v=MCPv1;k=ed25519;p=" + ed, "  " + proofRecord("ed25519", ed) + "  \n",
		// Hostile: wrong lengths, bad base64, an off-curve point, an
		// unknown algorithm, records run together, padding games.
		proofRecord("ed25519", ed[:20]), proofRecord("ed25519", "!!!!"), proofRecord("ecdsap384", "A"+ec[1:]),
		proofRecord("ecdsap384", base64.StdEncoding.EncodeToString(make([]byte, 49))), proofRecord("rsa", ed),
		proofRecord(" ed25519 ", ed), proofRecord("ed25519", ed+"===="), proofRecord("ed25519", "===="),
		"v=MCPv1; k=ed25519; p=" + ed + "v=MCPv1; k=ed25519; p=" + ed, "v=MCPv1; k= ; p=AAAA", "v=MCPv1; k=\u00a0ed25519; p=" + ed,
		"<html><body>404</body></html>", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		proofs := namespace.ParseProofs(text)
		if n := len("v=MCPv1;k=x;p=A"); len(proofs) > len(text)/n {
			t.Fatalf("%d proofs in %d bytes", len(proofs), len(text))
		}
		records := make([]string, 0, len(proofs))
		for _, pr := range proofs {
			if pr.Valid != (pr.Problem == "") {
				t.Fatalf("valid %v with problem %q", pr.Valid, pr.Problem)
			}
			if pr.Algorithm != strings.TrimSpace(pr.Algorithm) || strings.Contains(pr.Algorithm, ";") || !base64Chars.MatchString(pr.Key) {
				t.Fatalf("algorithm %q or key %q as no record can give them", pr.Algorithm, pr.Key)
			}
			if pr.Valid {
				key, err := base64.StdEncoding.DecodeString(pr.Key)
				switch {
				case err != nil:
					t.Fatalf("valid proof with undecodable key %q: %v", pr.Key, err)
				case pr.Algorithm == "ed25519" && len(key) == ed25519.PublicKeySize:
				case pr.Algorithm == "ecdsap384":
					if x, _ := elliptic.UnmarshalCompressed(elliptic.P384(), key); x == nil {
						t.Fatalf("valid ecdsap384 proof whose key is no P-384 point: %q", pr.Key)
					}
				default:
					t.Fatalf("valid proof %+v is not a key of its algorithm", pr)
				}
			}
			// The space before ';' keeps an empty algorithm a record.
			records = append(records, "v=MCPv1; k="+pr.Algorithm+" ; p="+pr.Key)
		}
		if diff := cmp.Diff(proofs, namespace.ParseProofs(strings.Join(records, "\n"))); diff != "" {
			t.Fatalf("proofs written back read differently (-first +second):\n%s", diff)
		}
	})
}

// FuzzClassify checks the namespace classifier, whose domain goes into a
// URL and a DNS query: a domain is a lower-case hostname that is exactly
// the namespace reversed, and the well-known URL built from it names that
// host and nothing else (no port, no user, no other path).
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"com.example", "io.github.octo-cat", "io.github.", "io.github.a_b", "com.example.mcp", "Com.Example", "example",
		"com.example@evil", "com.example:8443", "com.example/x", "com..example", "com.-example", "com.example.",
		"com.xn--bcher-kva", "com.bücher", "com.example%2fevil", "com.example#x", "com.[::1]", "1.0.0.127",
		strings.Repeat("a.", 130) + "com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ns string) {
		n := namespace.Classify(ns)
		if n.Name != ns {
			t.Fatalf("name %q, want %q", n.Name, ns)
		}
		switch n.Kind {
		case namespace.KindGitHub:
			if ns != "io.github."+n.Account || n.Account == "" || n.Domain != "" {
				t.Fatalf("github namespace %q read as %+v", ns, n)
			}
		case namespace.KindDomain:
			labels := strings.Split(n.Domain, ".")
			slices.Reverse(labels)
			if strings.Join(labels, ".") != strings.ToLower(ns) || n.Domain != strings.ToLower(n.Domain) || len(n.Domain) > 253 {
				t.Fatalf("domain %q is not namespace %q reversed", n.Domain, ns)
			}
			raw := (&url.URL{Scheme: "https", Host: n.Domain, Path: "/.well-known/mcp-registry-auth"}).String()
			u, err := url.Parse(raw)
			if err != nil || u.Hostname() != n.Domain || u.Port() != "" || u.User != nil || u.Path != "/.well-known/mcp-registry-auth" || u.RawQuery != "" {
				t.Fatalf("domain %q makes URL %q (%v), which names another place", n.Domain, raw, err)
			}
		case namespace.KindOther:
			if strings.Contains(ns, ".") {
				t.Fatalf("dotted namespace %q classified other", ns)
			}
		case namespace.KindInvalid:
			if n.Domain != "" || n.Account != "" {
				t.Fatalf("invalid namespace %q with a domain or account: %+v", ns, n)
			}
		default:
			t.Fatalf("unknown kind %q", n.Kind)
		}
	})
}
