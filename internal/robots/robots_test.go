package robots

import (
	"fmt"
	"strings"
	"testing"
)

func TestAllowed(t *testing.T) {
	const token = "cardcrawl"
	tests := []struct {
		name  string
		file  string
		allow []string
		deny  []string
	}{
		{name: "empty file allows everything", file: "", allow: []string{"/", "/.well-known/ai-catalog.json"}},
		{name: "not a robots file", file: "<html><body>hello</body></html>", allow: []string{"/x"}},
		{
			name:  "a group for everyone",
			file:  "User-agent: *\nDisallow: /private/\n",
			allow: []string{"/", "/public/x", "/privatex"},
			deny:  []string{"/private/", "/private/a?b=c"},
		},
		{
			name:  "a group of our own beats the one for everyone",
			file:  "User-agent: *\nDisallow: /\n\nUser-agent: CardCrawl\nDisallow: /cards/\n",
			allow: []string{"/.well-known/ai-catalog.json"},
			deny:  []string{"/cards/a.json"},
		},
		{
			name:  "our token with a version and a comment",
			file:  "User-agent: cardcrawl/1.2 (+https://example.org)\nDisallow: /x\nUser-agent: *\nDisallow: /\n",
			allow: []string{"/y"},
			deny:  []string{"/x"},
		},
		{
			name:  "another crawler's group does not apply",
			file:  "User-agent: OtherBot\nDisallow: /\n",
			allow: []string{"/", "/a"},
		},
		{
			name: "consecutive user-agent lines share a group; groups for one token combine",
			file: "User-agent: a\nUser-agent: cardcrawl\nDisallow: /one\n\nUser-agent: b\nDisallow: /two\n" +
				"User-agent: cardcrawl\nDisallow: /three\n",
			allow: []string{"/two"},
			deny:  []string{"/one", "/three"},
		},
		{
			name:  "a user-agent line after rules starts a new group",
			file:  "User-agent: cardcrawl\nDisallow: /a\nUser-agent: other\nDisallow: /b\n",
			allow: []string{"/b"},
			deny:  []string{"/a"},
		},
		{
			name:  "the longest match decides, allow wins a tie",
			file:  "User-agent: *\nDisallow: /p\nAllow: /p/open\nDisallow: /p/open/shut\nAllow: /t\nDisallow: /t\n",
			allow: []string{"/p/open", "/p/open/x", "/t", "/q"},
			deny:  []string{"/p", "/p/other", "/p/open/shut/x"},
		},
		{
			name:  "wildcards and the end anchor",
			file:  "User-agent: *\nDisallow: /*.json$\nDisallow: /a*/b\nAllow: /keep$\nDisallow: /keep\n",
			allow: []string{"/x.json?x=1", "/x.jsonl", "/ab", "/keep"},
			deny:  []string{"/x.json", "/d/e.json", "/a/b", "/axx/yy/b/c", "/keep/more"},
		},
		{
			name:  "an empty disallow allows, rules outside a group are ignored, comments and case",
			file:  "Disallow: /\n# c\nUSER-AGENT: * # all\nDISALLOW:\nallow: /x # fine\n",
			allow: []string{"/", "/anything"},
		},
		{
			name:  "CRLF line ends and a byte order mark",
			file:  "\ufeffUser-agent: *\r\nDisallow: /secret\r\n",
			allow: []string{"/open"},
			deny:  []string{"/secret/x"},
		},
		{
			name:  "percent-encoding compares normalised",
			file:  "User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /na\u00efve\n",
			allow: []string{"/cafe"},
			deny:  []string{"/caf%C3%A9/x", "/café", "/na%C3%AFve"},
		},
		{
			name:  "robots.txt itself is always allowed",
			file:  "User-agent: *\nDisallow: /\n",
			allow: []string{"/robots.txt"},
			deny:  []string{"/", "/.well-known/ai-catalog.json", ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.file), token)
			for _, p := range tc.allow {
				if !r.Allowed(p) {
					t.Errorf("%q: disallowed, want allowed", p)
				}
			}
			for _, p := range tc.deny {
				if r.Allowed(p) {
					t.Errorf("%q: allowed, want disallowed", p)
				}
			}
		})
	}
}

func TestDisallowAll(t *testing.T) {
	r := DisallowAll()
	for _, p := range []string{"/", "/.well-known/ai-catalog.json"} {
		if r.Allowed(p) {
			t.Errorf("%q allowed", p)
		}
	}
	if !r.Allowed(Path) {
		t.Error("robots.txt itself disallowed")
	}
	var zero *Rules
	if !zero.Allowed("/x") {
		t.Error("nil rules disallow")
	}
}

// TestParseReadsOnlyMaxBytes: rules past the limit are not read.
func TestParseReadsOnlyMaxBytes(t *testing.T) {
	file := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding\n", MaxBytes/10) + "Disallow: /late\n"
	r := Parse([]byte(file), "cardcrawl")
	if r.Allowed("/early") {
		t.Error("/early allowed")
	}
	if !r.Allowed("/late") {
		t.Error("/late, past the limit, disallowed")
	}
}

func TestToken(t *testing.T) {
	for in, want := range map[string]string{
		"cardcrawl/0.1 (+https://example.org)": "cardcrawl",
		"My_Bot-2 (compatible)":                "My_Bot-2",
		"*":                                    "*",
		"plain":                                "plain",
		"":                                     "",
	} {
		if got := Token(in); got != want {
			t.Errorf("Token(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseBoundsRules: past MaxRuleBytes of rules for the crawler, the file
// disallows everything; rules for others do not count.
func TestParseBoundsRules(t *testing.T) {
	var many strings.Builder
	for i, n := 0, 0; n <= MaxRuleBytes; i++ {
		p := fmt.Sprintf("/private/%06d", i)
		n += len(p)
		fmt.Fprintf(&many, "Disallow: %s\n", p)
	}
	for _, tc := range []struct {
		name, file string
		open       bool
	}{
		{"many rules for everyone", "User-agent: *\n" + many.String(), false},
		{"many rules for another crawler", "User-agent: other\n" + many.String() + "User-agent: *\nDisallow: /x\n", true},
		{"many rules for everyone, few of our own", "User-agent: *\n" + many.String() + "User-agent: cardcrawl\nDisallow: /x\n", true},
	} {
		if got := Parse([]byte(tc.file), "cardcrawl").Allowed("/open"); got != tc.open {
			t.Errorf("%s: /open allowed %v, want %v", tc.name, got, tc.open)
		}
	}
}
