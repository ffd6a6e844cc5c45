package servercard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinkSchemes: a link that a browser would follow as something other
// than http(s) is an error that keeps the card from being conformant, in
// every spelling a browser accepts; icons follow the card schema's rule.
func TestLinkSchemes(t *testing.T) {
	v := newValidator(t)
	const remote = `,"remotes":[{"type":"streamable-http","url":"https://example.com/mcp"}]`
	type want struct {
		Grade Grade
		Code  string // the link's finding, "" for none
	}
	type linkCase struct {
		member string // the link member, %s is the value
		link   string
		want   want
	}
	hostileLinks := []string{
		"javascript:alert(1)",
		"JavaScript:alert(1)",
		"JAVASCRIPT:alert(document.domain)",
		" javascript:alert(1)",
		"\tjavascript:alert(1)",
		"\x01javascript:alert(1)",
		"java\tscript:alert(1)",
		"java\nscript:alert(1)",
		"data:text/html,<script>alert(1)</script>",
		"DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
		"vbscript:msgbox(1)",
		"VBScript:msgbox(1)",
		"file:///etc/passwd",
		"ftp://example.com/x",
	}
	tests := map[string]linkCase{}
	for _, l := range hostileLinks {
		tests["websiteUrl "+l] = linkCase{`"websiteUrl":%s`, l, want{NearConformant, CodeURLSchemeNotAllowed}}
		tests["repository "+l] = linkCase{`"repository":{"url":%s,"source":"github"}`, l, want{NearConformant, CodeURLSchemeNotAllowed}}
		tests["icon "+l] = linkCase{`"icons":[{"src":%s}]`, l, want{NearConformant, CodeURLSchemeNotAllowed}}
	}
	for name, tc := range map[string]linkCase{
		"https website":             {`"websiteUrl":%s`, "https://example.com/", want{Conformant, ""}},
		"http website":              {`"websiteUrl":%s`, "http://example.com/", want{Conformant, ""}},
		"upper-case https website":  {`"websiteUrl":%s`, "HTTPS://example.com/", want{Conformant, ""}},
		"schemeless website":        {`"websiteUrl":%s`, "example.com", want{Conformant, CodeInvalidURI}},
		"space before https":        {`"websiteUrl":%s`, " https://example.com/", want{Conformant, CodeInvalidURI}},
		"https icon":                {`"icons":[{"src":%s}]`, "https://example.com/i.png", want{Conformant, ""}},
		"http icon":                 {`"icons":[{"src":%s}]`, "http://example.com/i.png", want{Conformant, CodeIconNotHTTPS}},
		"base64 png icon":           {`"icons":[{"src":%s}]`, "data:image/png;base64,iVBORw0KGgo=", want{Conformant, CodeIconNotHTTPS}},
		"base64 svg icon":           {`"icons":[{"src":%s}]`, "data:image/svg+xml;base64,PHN2Zy8+", want{Conformant, CodeIconNotHTTPS}},
		"non-base64 svg icon":       {`"icons":[{"src":%s}]`, "data:image/svg+xml,<svg onload=alert(1)>", want{NearConformant, CodeURLSchemeNotAllowed}},
		"https repository":          {`"repository":{"url":%s,"source":"github"}`, "https://github.com/example/x", want{Conformant, ""}},
		"git+ssh repository":        {`"repository":{"url":%s,"source":"github"}`, "git+ssh://git@github.com/example/x", want{NearConformant, CodeURLSchemeNotAllowed}},
		"javascript with no remote": {`"websiteUrl":%s,"remotes":[]`, "javascript:alert(1)", want{NonConformant, CodeURLSchemeNotAllowed}},
	} {
		tests[name] = tc
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			lit, _ := json.Marshal(tc.link)
			member := tc.member
			doc := `{` + okHead + `,` + fmt.Sprintf(member, string(lit))
			if !strings.Contains(member, `"remotes"`) {
				doc += remote
			}
			doc += `}`
			res := v.Check([]byte(doc))
			got := want{Grade: res.Grade}
			for _, f := range res.Findings {
				switch f.Code {
				case CodeURLSchemeNotAllowed, CodeIconNotHTTPS, CodeInvalidURI:
					if got.Code == "" {
						got.Code = f.Code
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nfindings: %+v", doc, diff, res.Findings)
			}
		})
	}
}

func TestIsWebURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://example.com/":          true,
		"http://example.com":            true,
		"HTTPS://Example.com/x":         true,
		"https://":                      false,
		"https:/example.com":            false,
		" https://example.com":          false,
		"https://example.com/a b":       false,
		"https://example.com/\t":        false,
		"https://example.com/\x7f":      false,
		"javascript:alert(1)":           false,
		"javascript://example.com/%0a1": false,
		"data:image/png;base64,AAAA":    false,
		"//example.com/x":               false,
		"/relative":                     false,
		"":                              false,
	} {
		if got := IsWebURL(s); got != want {
			t.Errorf("IsWebURL(%q) = %v, want %v", s, got, want)
		}
	}
	if !IsHTTPSURL("HTTPS://example.com/i.png") || IsHTTPSURL("http://example.com/i.png") || IsHTTPSURL("data:image/png;base64,AAAA") {
		t.Error("IsHTTPSURL accepts something other than https, or refuses https")
	}
}

func TestIsWebRemoteURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://mcp.example.com/mcp":        true,
		"https://{tenant}.example.com/mcp":   true,
		"{baseUrl}/mcp":                      true,
		"{baseUrl}":                          true,
		"javascript:alert(1)":                false,
		"{x} javascript:alert(1)":            false,
		"{notclosed/mcp":                     false,
		"https://{tenant}.example.com/ mcp":  false,
		"ws://mcp.example.com/":              false,
		"{scheme}://mcp.example.com/mcp\x1b": false,
	} {
		if got := IsWebRemoteURL(s); got != want {
			t.Errorf("IsWebRemoteURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestClipKeepsWholeCharacters(t *testing.T) {
	s := strings.Repeat("a", 199) + "€€"
	got := clip(s)
	if got != strings.Repeat("a", 199)+"…" {
		t.Errorf("clip = %q", got)
	}
}
