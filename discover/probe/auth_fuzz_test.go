package probe

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseChallenges checks the WWW-Authenticate reader. The input is
// split on newlines into header values. It must end (the fuzzer's timeout
// catches a loop), give schemes and parameter names that are lower-case
// tokens, and read its own output back: the challenges written in canonical
// form (every value quoted) parse to the same challenges.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		// The MCP authorization spec's examples and go-sdk's answer.
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`,
		`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="Additional file write permission required"`,
		`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"` + "\n" + `Basic realm="x"`,
		`Basic YWxhZGRpbjpvcGVu==, Bearer error="invalid_token", error_description="needs \"a\", b"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		// Hostile: unclosed quotes, bare '=', escapes at the end, empty
		// values, control bytes, duplicates, odd separators.
		`Bearer realm="unclosed`, `Bearer a=`, `=,=`, `Bearer a="\`, `Bearer a="", b=""`, "Bearer a=\"\x00\r\n\x1b[2J\"",
		`Bearer scope=a, scope=b`, `,,, Bearer ,, a=b,,`, `Bearer a==b`, `a b c d`, "\t\t", `Bearer a = "b" , c = d`,
		`Bearer realm="` + strings.Repeat(`\"`, 100) + `"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		values := strings.Split(in, "\n")
		chs := parseChallenges(values)
		for _, ch := range chs {
			if !isLowerToken(ch.Scheme) {
				t.Fatalf("scheme %q is not a lower-case token", ch.Scheme)
			}
			if ch.Params == nil {
				t.Fatalf("challenge %q has a nil parameter map", ch.Scheme)
			}
			for k := range ch.Params {
				if !isLowerToken(k) {
					t.Fatalf("parameter name %q is not a lower-case token", k)
				}
			}
		}
		again := parseChallenges([]string{writeChallenges(chs)})
		if diff := cmp.Diff(chs, again, cmp.Comparer(func(a, b map[string]string) bool { return maps.Equal(a, b) })); diff != "" {
			t.Fatalf("challenges written as %q read back differently (-first +second):\n%s", writeChallenges(chs), diff)
		}
	})
}

func isLowerToken(s string) bool {
	if s == "" || strings.ToLower(s) != s {
		return false
	}
	for i := range len(s) {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// writeChallenges is the canonical form of challenges: one header value,
// parameters in name order, every value a quoted-string.
func writeChallenges(chs []challenge) string {
	parts := make([]string, 0, len(chs))
	for _, ch := range chs {
		var b strings.Builder
		b.WriteString(ch.Scheme)
		for i, k := range slices.Sorted(maps.Keys(ch.Params)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(" " + k + `="`)
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(ch.Params[k]))
			b.WriteByte('"')
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ", ")
}
