package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

func TestParseDigest(t *testing.T) {
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		name, digest string // the member's JSON value
		want         string // Entry.Digest
		finding      *sumFinding
	}{
		{"sha256", `"sha256:` + hex64 + `"`, "sha256:" + hex64, nil},
		{"sha512", `"sha512:` + hex64 + hex64 + `"`, "sha512:" + hex64 + hex64, nil},
		{"sha3-256", `"sha3-256:` + hex64 + `"`, "sha3-256:" + hex64, nil},
		{"no digest", `null`, "", nil},
		{"upper-case hex", `"sha256:` + strings.ToUpper(hex64) + `"`, "", &sumFinding{finding.Warning, CodeDigestMalformed, "/entries/0/digest"}},
		{"short", `"sha256:abcd"`, "", &sumFinding{finding.Warning, CodeDigestMalformed, "/entries/0/digest"}},
		{"no algorithm", `"` + hex64 + `"`, "", &sumFinding{finding.Warning, CodeDigestMalformed, "/entries/0/digest"}},
		{"sha1", `"sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"`, "", &sumFinding{finding.Warning, CodeDigestWeak, "/entries/0/digest"}},
		{"MD5", `"MD5:d41d8cd98f00b204e9800998ecf8427e"`, "", &sumFinding{finding.Warning, CodeDigestWeak, "/entries/0/digest"}},
		{"unknown", `"blake3:` + hex64 + `"`, "", &sumFinding{finding.Info, CodeDigestUnsupported, "/entries/0/digest"}},
		{"not a string", `42`, "", &sumFinding{finding.Warning, "entry_invalid_field", "/entries/0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf(`{"specVersion":"1.0","entries":[{"identifier":"a","type":"%s","url":"https://x.example/a","digest":%s}]}`,
				MediaTypeServerCard, tc.digest)
			cat, fl, err := Parse([]byte(doc), nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Entries) != 1 {
				t.Fatalf("%d entries, want the one (a digest never costs the entry)", len(cat.Entries))
			}
			got := ""
			if d := cat.Entries[0].Digest; !d.IsZero() {
				got = d.String()
			}
			if got != tc.want {
				t.Errorf("digest %q, want %q", got, tc.want)
			}
			var want []sumFinding
			if tc.finding != nil {
				want = []sumFinding{*tc.finding}
			}
			if diff := cmp.Diff(want, summarizeFindings(fl)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDigestMatches(t *testing.T) {
	body := []byte(`{"name":"x"}`)
	d, code, _ := parseDigest("sha256:" + Digest{Algorithm: "sha256"}.Of(body).Hex)
	if code != "" || !d.Matches(body) {
		t.Fatalf("a digest of the body does not match it (%q)", code)
	}
	if d.Matches(append(body, ' ')) {
		t.Error("one byte more still matches")
	}
	if (Digest{}).Matches(body) {
		t.Error("the zero digest matches")
	}
	// A known value: SHA-256 of "test" (the spec's own digest example).
	if got := (Digest{Algorithm: "sha256"}).Of([]byte("test")).Hex; got != "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" {
		t.Errorf("sha256 of test = %s", got)
	}
}
