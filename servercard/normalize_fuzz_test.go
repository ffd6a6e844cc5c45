package servercard

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzNormalizeTemplate checks URL normalisation on templates, which
// FuzzNormalizeURL (idempotence) leaves to chance: every {placeholder}
// comes out verbatim, in order, as often as it went in; IsTemplate agrees
// with TemplateVars; and normalising commutes with filling the template
// in, so a template and the URL it yields dedup alike.
func FuzzNormalizeTemplate(f *testing.F) {
	// The remote URLs of the spec's example cards (testdata/specs).
	for _, b := range specCards(f) {
		var c struct {
			Remotes []struct {
				URL string `json:"url"`
			} `json:"remotes"`
		}
		if json.Unmarshal(b, &c) == nil {
			for _, r := range c.Remotes {
				f.Add(r.URL)
			}
		}
	}
	for _, s := range []string{
		// Shapes the Registry's docs and real cards use.
		"https://{tenant_id}.example.com/mcp", "https://mcp.example.com/{region}/sse", "{baseUrl}/mcp/", "https://api.example.com/mcp?key={apiKey}",
		// Hostile: placeholders next to escapes, dots, ports, fragments,
		// upper case and each other; the masking prefix in the input.
		"https://{A}.Example.COM:443/{b}/../{c}/", "https://x.example/%7b{a}%7D", "https://x.example/{a}%41{b}", "https://x.example:{port}/",
		"https://x.example/{a}#{b}", "https://{a}{b}.example/", "https://x.example/cctmplx0x/{a}", "https://x.example/CCTMPLX0x{a}",
		"https://x.example/{a}/./{a}", "https://{a}@x.example/", "https://[::1]/{a}", "{a}", "{a}?{b}", "https://{a}.bücher.example/",
		"https://x.example/{a}{", "https://x.example/}{a}", "https://x.example/%{a}", "https://x.example/{a}/%2e%2e/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if IsTemplate(in) != (len(TemplateVars(in)) > 0) {
			t.Fatalf("IsTemplate(%q) = %v, TemplateVars = %q", in, IsTemplate(in), TemplateVars(in))
		}
		out, err := NormalizeURL(in)
		if err != nil {
			return
		}
		if got, want := templateVar.FindAllString(out, -1), templateVar.FindAllString(in, -1); !slices.Equal(got, want) {
			t.Fatalf("NormalizeURL(%q) = %q: placeholders %q, want %q", in, out, got, want)
		}
		fill := func(s string) string { return templateVar.ReplaceAllString(s, "v1") }
		a, errA := NormalizeURL(fill(in))
		b, errB := NormalizeURL(fill(out))
		if (errA == nil) != (errB == nil) || (errA == nil && a != b) {
			t.Fatalf("filling %q gives %q (%v); filling its normal form %q gives %q (%v)", in, a, errA, out, b, errB)
		}
	})
}
