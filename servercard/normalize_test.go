package servercard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		// case
		{in: "HTTPS://Example.COM/MCP", want: "https://example.com/MCP"},
		{in: "  https://example.com/mcp \n", want: "https://example.com/mcp"},
		// ports
		{in: "https://example.com:443/mcp", want: "https://example.com/mcp"},
		{in: "http://example.com:80/mcp", want: "http://example.com/mcp"},
		{in: "http://example.com:443/mcp", want: "http://example.com:443/mcp"},
		{in: "https://example.com:8443/mcp", want: "https://example.com:8443/mcp"},
		{in: "https://example.com:08443/mcp", want: "https://example.com:8443/mcp"},
		{in: "https://example.com:/mcp", want: "https://example.com/mcp"},
		// trailing slash and root
		{in: "https://api.example.com/mcp/", want: "https://api.example.com/mcp"},
		{in: "https://api.example.com/mcp//", want: "https://api.example.com/mcp"},
		{in: "https://example.com", want: "https://example.com/"},
		{in: "https://example.com/", want: "https://example.com/"},
		{in: "https://example.com//", want: "https://example.com/"},
		{in: "https://example.com/a/./b/../mcp/", want: "https://example.com/a/mcp"},
		// query and fragment
		{in: "https://example.com/mcp?b=2&a=1", want: "https://example.com/mcp?b=2&a=1"},
		{in: "https://example.com/mcp/?a=1#frag", want: "https://example.com/mcp?a=1"},
		{in: "https://example.com/mcp?", want: "https://example.com/mcp"},
		{in: "https://example.com/mcp#x", want: "https://example.com/mcp"},
		// percent-encoding
		{in: "https://example.com/%7euser/%6dcp", want: "https://example.com/~user/mcp"},
		{in: "https://example.com/a%2fb", want: "https://example.com/a%2Fb"},
		{in: "https://example.com/mcp?q=%7e%2f", want: "https://example.com/mcp?q=~%2F"},
		{in: "https://example.com/über", want: "https://example.com/%C3%BCber"},
		// IDN, IPv6, userinfo
		{in: "https://Bücher.Example/mcp", want: "https://xn--bcher-kva.example/mcp"},
		{in: "https://[2001:DB8::1]:443/mcp", want: "https://[2001:db8::1]/mcp"},
		{in: "https://User:Pw@Example.com/mcp", want: "https://User:Pw@example.com/mcp"},
		// templates
		{in: "https://{Tenant}.Example.com/mcp/", want: "https://{Tenant}.example.com/mcp"},
		{in: "https://example.com/{Org}/{repo}/MCP/", want: "https://example.com/{Org}/{repo}/MCP"},
		{in: "https://{a}.{b}.example.com/mcp?key={Key}", want: "https://{a}.{b}.example.com/mcp?key={Key}"},
		{in: "{baseUrl}/mcp/", want: "{baseUrl}/mcp"},
		{in: "{baseUrl}", want: "{baseUrl}"},
		{in: "{baseUrl}/", want: "{baseUrl}/"},
		{in: "{baseUrl}?x=%7e#f", want: "{baseUrl}?x=~"},
		{in: "https://cctmplx0x.example.com/{a}", want: "https://cctmplx0x.example.com/{a}"},
		// garbage: trimmed input back, with an error
		{in: "", want: "", wantErr: true},
		{in: "   ", want: "", wantErr: true},
		{in: "not a url", want: "not a url", wantErr: true},
		{in: " /mcp ", want: "/mcp", wantErr: true},
		{in: "ftp://example.com/x", want: "ftp://example.com/x", wantErr: true},
		{in: "mailto:a@example.com", want: "mailto:a@example.com", wantErr: true},
		{in: "https://example.com:99999/", want: "https://example.com:99999/", wantErr: true},
		{in: "https://example.com:{port}/mcp", want: "https://example.com:{port}/mcp", wantErr: true},
		{in: "https://{bad-name}.example.com/", want: "https://{bad-name}.example.com/", wantErr: true},
		{in: "{unclosed/mcp", want: "{unclosed/mcp", wantErr: true},
		{in: "https://", want: "https://", wantErr: true},
		{in: "http://[::1", want: "http://[::1", wantErr: true},
	}
	for _, tt := range tests {
		got, err := NormalizeURL(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNormalizeURLMergesSpellings(t *testing.T) {
	spellings := []string{
		"https://api.example.com/mcp",
		"https://api.example.com/mcp/",
		"HTTPS://API.EXAMPLE.COM:443/mcp",
		"https://api.example.com/%6Dcp#section",
		"https://api.example.com/./mcp",
	}
	want, err := NormalizeURL(spellings[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spellings[1:] {
		if got, _ := NormalizeURL(s); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestTemplateVars(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		tmpl bool
	}{
		{in: "https://example.com/mcp"},
		{in: "https://{tenant}.example.com/mcp", want: []string{"tenant"}, tmpl: true},
		{in: "{base}/x/{Tenant}/{base}?k={tenant}", want: []string{"base", "Tenant", "tenant"}, tmpl: true},
		{in: "https://example.com/{1bad}/{}/{a-b}"},
		{in: "https://example.com/%7Btoken%7D"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, TemplateVars(tt.in)); diff != "" {
			t.Errorf("TemplateVars(%q) (-want +got):\n%s", tt.in, diff)
		}
		if got := IsTemplate(tt.in); got != tt.tmpl {
			t.Errorf("IsTemplate(%q) = %v, want %v", tt.in, got, tt.tmpl)
		}
	}
}

func BenchmarkNormalizeURL(b *testing.B) {
	for b.Loop() {
		if _, err := NormalizeURL("https://{Tenant}.Example.com:443/mcp/?a=%7e"); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzNormalizeURL checks that normalisation never panics and is idempotent:
// a key fed back in must come out unchanged, or dedup would depend on how many
// times a URL went through the program.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"https://Example.com:443/mcp/", "{base}/mcp/", "https://{t}.example.com/a/../b?x=%7e#f",
		"http://[::1]:80/", "https://bücher.example/", "https://u@example.com", "https://example.com/%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		once, err := NormalizeURL(in)
		if err != nil {
			return
		}
		twice, err := NormalizeURL(once)
		if err != nil {
			t.Fatalf("NormalizeURL(%q) = %q, which then fails: %v", in, once, err)
		}
		if twice != once {
			t.Errorf("not idempotent: %q -> %q -> %q", in, once, twice)
		}
	})
}
