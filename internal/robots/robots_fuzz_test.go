package robots

import (
	"strings"
	"testing"
)

// FuzzParse: any file parses; robots.txt itself stays allowed; a file with
// nothing for the token or for everyone allows everything; and a path's
// answer does not depend on how its escapes are spelled.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"User-agent: *\nDisallow: /\n",
		"User-agent: cardcrawl\nAllow: /a$\nDisallow: /*b\n",
		"\ufeffuser-agent:*\r\ndisallow:/%c3%a4\r\n",
		"Disallow: /\nUser-agent: x\n",
		"User-agent: *\nDisallow: /**$$\n",
	} {
		f.Add(seed, "/a/b?c")
	}
	f.Fuzz(func(t *testing.T, file, path string) {
		r := Parse([]byte(file), "cardcrawl")
		if !r.Allowed(Path) {
			t.Fatalf("robots.txt disallowed by %q", file)
		}
		if !strings.Contains(strings.ToLower(file), "user-agent") && !r.Allowed(path) {
			t.Fatalf("%q disallowed by a file with no group: %q", path, file)
		}
		if r.Allowed(path) != r.Allowed(normalise(path)) {
			t.Fatalf("%q and its normal form %q answer differently under %q", path, normalise(path), file)
		}
	})
}
