package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// sumEntry is the comparable view of an Entry used by the tests: RawMessages
// as strings so that go-cmp diffs read well.
type sumEntry struct {
	Index       int    `json:"index"`
	Identifier  string `json:"identifier"`
	Type        string `json:"type"`
	Essence     string `json:"essence"`
	URL         string `json:"url,omitempty"`
	ResolvedURL string `json:"resolvedUrl,omitempty"`
	Data        string `json:"data,omitempty"`
	Version     string `json:"version,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Digest      string `json:"digest,omitempty"`
}

// sumFinding drops the human message, which is free to change.
type sumFinding struct {
	Severity finding.Severity `json:"severity"`
	Code     string           `json:"code"`
	Path     string           `json:"path,omitempty"`
}

func summarizeEntries(es []Entry) []sumEntry {
	var out []sumEntry
	for _, e := range es {
		out = append(out, sumEntry{
			Index: e.Index, Identifier: e.Identifier, Type: e.Type, Essence: e.Essence,
			URL: e.URL, ResolvedURL: e.ResolvedURL, Data: compact(e.Data),
			Version: e.Version, DisplayName: e.DisplayName, Description: e.Description,
		})
		if !e.Digest.IsZero() {
			out[len(out)-1].Digest = e.Digest.String()
		}
	}
	return out
}

func summarizeFindings(fl finding.List) []sumFinding {
	var out []sumFinding
	for _, f := range fl {
		out = append(out, sumFinding{f.Severity, f.Code, f.Path})
	}
	return out
}

func compact(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "!invalid: " + string(raw)
	}
	return b.String()
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	return u
}

// genCatalog builds a catalog with n distinct, valid entries.
func genCatalog(n int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"specVersion":"1.0","host":{"displayName":"Example"},"entries":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"identifier":"urn:air:example.com:mcp:server-%d","type":"application/mcp-server-card+json","url":"https://mcp%d.example.com/server-card","version":"1.%d.0","displayName":"Server %d","description":"An example MCP server number %d.","tags":["a","b"]}`, i, i, i, i, i)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}
