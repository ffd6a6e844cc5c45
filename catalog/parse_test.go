package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/google/go-cmp/cmp"
)

const (
	sc   = MediaTypeServerCard
	base = "https://example.com/.well-known/ai-catalog.json"
)

func f(sev finding.Severity, code, path string) sumFinding { return sumFinding{sev, code, path} }

// card is a valid server-card entry by URL, for padding cases.
func card(i int, id, u string) sumEntry {
	return sumEntry{Index: i, Identifier: id, Type: sc, Essence: sc, URL: u, ResolvedURL: u}
}

func TestParse(t *testing.T) {
	const (
		E = finding.Error
		W = finding.Warning
		I = finding.Info
	)
	tests := []struct {
		name         string
		body         string
		base         string // "" means nil
		opts         Options
		wantErr      error
		wantSpec     string
		wantCount    int
		wantEntries  []sumEntry
		wantFindings []sumFinding
	}{
		// Not JSON at all.
		{name: "empty", body: "", wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},
		{name: "whitespace", body: " \n\t ", wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},
		{name: "html soft 404", body: "\n<!DOCTYPE html><html><body>Not found</body></html>", wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},
		{name: "bom then html", body: "\xEF\xBB\xBF<html></html>", wantErr: ErrNotJSON, wantFindings: []sumFinding{f(W, "utf8_bom", ""), f(E, "not_json", "")}},
		{name: "truncated json", body: `{"specVersion":"1.0","entries":[`, wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},
		{name: "trailing garbage", body: `{"specVersion":"1.0","entries":[]} x`, wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},
		{name: "single quotes", body: `{'specVersion':'1.0'}`, wantErr: ErrNotJSON, wantFindings: []sumFinding{f(E, "not_json", "")}},

		// JSON, but not a catalog.
		{name: "empty array", body: `[]`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "string", body: `"hello"`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "null", body: `null`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "number", body: `42`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "foo object", body: `{"foo":1}`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "server card", body: `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/x","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://mcp.example.com/mcp"}]}`,
			wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "entries is an object", body: `{"specVersion":"1.0","entries":{}}`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "/entries")}},
		{name: "entries is null", body: `{"specVersion":"1.0","entries":null}`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},
		{name: "entries spelled with capital", body: `{"specVersion":"1.0","Entries":[]}`, wantErr: ErrNotCatalog, wantFindings: []sumFinding{f(E, "not_catalog", "")}},

		// Versions.
		{name: "major 2", body: `{"specVersion":"2.0","entries":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "major 2 without entries", body: `{"specVersion":"2.0","items":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "numeric 12345", body: `{"specVersion":12345,"entries":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "not a version", body: `{"specVersion":"latest","entries":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "boolean version", body: `{"specVersion":true,"entries":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "object version", body: `{"specVersion":{"major":1},"entries":[]}`, wantErr: ErrUnsupportedVersion, wantFindings: []sumFinding{f(E, "spec_version_unsupported", "/specVersion")}},
		{name: "missing version", body: `{"entries":[]}`, wantSpec: "1.0", wantFindings: []sumFinding{f(W, "spec_version_missing", "/specVersion")}},
		{name: "null version", body: `{"specVersion":null,"entries":[]}`, wantSpec: "1.0", wantFindings: []sumFinding{f(W, "spec_version_missing", "/specVersion")}},
		{name: "draft", body: `{"specVersion":"draft","entries":[]}`, wantSpec: "draft", wantFindings: []sumFinding{f(W, "spec_version_draft", "/specVersion")}},
		{name: "newer minor", body: `{"specVersion":"1.7","entries":[]}`, wantSpec: "1.7", wantFindings: []sumFinding{f(I, "spec_version_minor_newer", "/specVersion")}},
		{name: "number 1.0", body: `{"specVersion":1.0,"entries":[]}`, wantSpec: "1.0", wantFindings: []sumFinding{f(W, "spec_version_malformed", "/specVersion")}},
		{name: "major only", body: `{"specVersion":"1","entries":[]}`, wantSpec: "1", wantFindings: []sumFinding{f(W, "spec_version_malformed", "/specVersion")}},
		{name: "padded", body: `{"specVersion":" 1.0 ","entries":[]}`, wantSpec: " 1.0 ", wantFindings: []sumFinding{f(W, "spec_version_malformed", "/specVersion")}},
		{name: "semver 1.0.0", body: `{"specVersion":"1.0.0","entries":[]}`, wantSpec: "1.0.0", wantFindings: []sumFinding{f(W, "spec_version_malformed", "/specVersion")}},
		{name: "major 0", body: `{"specVersion":"0.9","entries":[]}`, wantSpec: "0.9", wantFindings: []sumFinding{f(W, "spec_version_major_older", "/specVersion")}},

		// Document-level oddities that still parse.
		{name: "minimal", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")}},
		{name: "bom", body: "\xEF\xBB\xBF" + `{"specVersion":"1.0","entries":[]}`, wantSpec: "1.0", wantFindings: []sumFinding{f(W, "utf8_bom", "")}},
		{name: "host not object", body: `{"specVersion":"1.0","host":"Example Inc","entries":[]}`, wantSpec: "1.0", wantFindings: []sumFinding{f(W, "host_not_object", "/host")}},
		{name: "duplicate top-level key, last wins", body: `{"specVersion":"2.0","specVersion":"1.0","entries":[]}`, wantSpec: "1.0",
			wantFindings: []sumFinding{f(W, "duplicate_json_key", "/specVersion")}},
		{name: "duplicate key inside entry", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"text/plain","type":"application/mcp-server-card+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")},
			wantFindings: []sumFinding{f(W, "duplicate_json_key", "/entries/0/type")}},
		{name: "escaped duplicate key", body: `{"specVersion":"1.0","entries":[],"a/b":1,"a\/b":2}`, wantSpec: "1.0",
			wantFindings: []sumFinding{f(W, "duplicate_json_key", "/a~1b")}},
		{name: "escaped member name is matched", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","\u0074ype":"application/mcp-server-card+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")}},
		{name: "ard extras are not findings", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card","representativeQueries":["q1","q2"],"capabilities":["X"],"metadata":{"k":"v"}}],"futureMember":{}}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")}},

		// Entries that are skipped.
		{name: "entry not object", body: `{"specVersion":"1.0","entries":["urn:a",7,{"identifier":"urn:b","type":"application/mcp-server-card+json","url":"https://b.example/card"}]}`,
			wantSpec: "1.0", wantCount: 3, wantEntries: []sumEntry{card(2, "urn:b", "https://b.example/card")},
			wantFindings: []sumFinding{f(E, "entry_not_object", "/entries/0"), f(E, "entry_not_object", "/entries/1")}},
		{name: "entry missing identifier", body: `{"specVersion":"1.0","entries":[{"type":"text/plain","url":"https://a.example/llms.txt"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_missing_identifier", "/entries/0")}},
		{name: "entry null identifier", body: `{"specVersion":"1.0","entries":[{"identifier":null,"type":"text/plain","url":"https://a.example/llms.txt"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_missing_identifier", "/entries/0")}},
		{name: "entry numeric identifier", body: `{"specVersion":"1.0","entries":[{"identifier":7,"type":"text/plain","url":"https://a.example/llms.txt"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_identifier", "/entries/0")}},
		{name: "entry blank identifier", body: `{"specVersion":"1.0","entries":[{"identifier":"  ","type":"text/plain","url":"https://a.example/llms.txt"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_identifier", "/entries/0")}},
		{name: "entry missing type", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_missing_type", "/entries/0")}},
		{name: "entry type not string", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":["application/json"],"url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_type", "/entries/0")}},
		{name: "entry mediaType empty", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","mediaType":"","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_type", "/entries/0")}},
		{name: "entry url and data", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json","url":"https://a.example/a.json","data":{"k":"v"}}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_url_and_data", "/entries/0")}},
		{name: "entry neither url nor data", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json"}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_no_url_or_data", "/entries/0")}},
		{name: "entry empty url", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json","url":""}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_url", "/entries/0")}},
		{name: "entry url object", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json","url":{"href":"https://a.example/"}}]}`,
			wantSpec: "1.0", wantCount: 1, wantFindings: []sumFinding{f(E, "entry_invalid_url", "/entries/0")}},

		// Entries that are kept, with or without findings.
		{name: "legacy mediaType", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","mediaType":"Application/MCP-Server-Card+JSON","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries:  []sumEntry{{Identifier: "urn:a", Type: "Application/MCP-Server-Card+JSON", Essence: sc, URL: "https://a.example/card", ResolvedURL: "https://a.example/card"}},
			wantFindings: []sumFinding{f(I, "entry_legacy_media_type", "/entries/0")}},
		{name: "type and mediaType agree", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","mediaType":"application/MCP-server-card+json; v=1","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")}},
		{name: "type and mediaType disagree", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","mediaType":"application/mcp-server+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")},
			wantFindings: []sumFinding{f(W, "entry_type_conflict", "/entries/0")}},
		{name: "type parameters kept as written", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/vnd.oai.openapi+json;version=3.1","url":"https://a.example/openapi.json"}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries: []sumEntry{{Identifier: "urn:a", Type: "application/vnd.oai.openapi+json;version=3.1", Essence: "application/vnd.oai.openapi+json", URL: "https://a.example/openapi.json", ResolvedURL: "https://a.example/openapi.json"}}},
		{name: "null url beside data", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":null,"data":{"name":"com.example/a"}}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries: []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, Data: `{"name":"com.example/a"}`}}},
		{name: "relative url", base: base, body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/ai-catalog+json","url":"./department-catalog.json"},{"identifier":"urn:b","type":"application/mcp-server-card+json","url":"/mcp/card"},{"identifier":"urn:c","type":"application/mcp-server-card+json","url":"//cdn.example.org/card"},{"identifier":"urn:d","type":"application/mcp-server-card+json","url":"../card?x=1#frag"}]}`,
			wantSpec: "1.0", wantCount: 4,
			wantEntries: []sumEntry{
				{Index: 0, Identifier: "urn:a", Type: MediaTypeCatalog, Essence: MediaTypeCatalog, URL: "./department-catalog.json", ResolvedURL: "https://example.com/.well-known/department-catalog.json"},
				{Index: 1, Identifier: "urn:b", Type: sc, Essence: sc, URL: "/mcp/card", ResolvedURL: "https://example.com/mcp/card"},
				{Index: 2, Identifier: "urn:c", Type: sc, Essence: sc, URL: "//cdn.example.org/card", ResolvedURL: "https://cdn.example.org/card"},
				{Index: 3, Identifier: "urn:d", Type: sc, Essence: sc, URL: "../card?x=1#frag", ResolvedURL: "https://example.com/card?x=1#frag"},
			},
			wantFindings: []sumFinding{f(I, "entry_url_relative", "/entries/0"), f(I, "entry_url_relative", "/entries/1"), f(I, "entry_url_relative", "/entries/2"), f(I, "entry_url_relative", "/entries/3")}},
		{name: "relative url after redirect base", base: "https://www.example.org/catalogs/v2/root.json", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/ai-catalog+json","url":"team.json"}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries:  []sumEntry{{Identifier: "urn:a", Type: MediaTypeCatalog, Essence: MediaTypeCatalog, URL: "team.json", ResolvedURL: "https://www.example.org/catalogs/v2/team.json"}},
			wantFindings: []sumFinding{f(I, "entry_url_relative", "/entries/0")}},
		{name: "relative url without base", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"/mcp/card"}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries:  []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, URL: "/mcp/card"}},
			wantFindings: []sumFinding{f(W, "entry_url_unresolvable", "/entries/0")}},
		{name: "unparseable url", base: base, body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://[::1/card"}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries:  []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://[::1/card"}},
			wantFindings: []sumFinding{f(W, "entry_url_unresolvable", "/entries/0")}},
		{name: "absolute url normalised", base: base, body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":" https://a.example/x/../card "}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries: []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, URL: " https://a.example/x/../card ", ResolvedURL: "https://a.example/card"}}},
		{name: "optional fields", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card","version":"2.1.0","displayName":"Weather","description":"Forecasts."}]}`,
			wantSpec: "1.0", wantCount: 1,
			wantEntries: []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/card", ResolvedURL: "https://a.example/card", Version: "2.1.0", DisplayName: "Weather", Description: "Forecasts."}}},
		{name: "optional fields of the wrong type", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card","version":2,"displayName":{"en":"W"},"description":["d"]}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")},
			wantFindings: []sumFinding{f(W, "entry_invalid_field", "/entries/0"), f(W, "entry_invalid_field", "/entries/0"), f(W, "entry_invalid_field", "/entries/0")}},

		// Uniqueness.
		{name: "duplicate identifier without version", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/old"},{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/new"}]}`,
			wantSpec: "1.0", wantCount: 2, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/old")},
			wantFindings: []sumFinding{f(E, "duplicate_identifier", "/entries/1")}},
		{name: "duplicate identifier and version", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","version":"1.0.0","type":"application/mcp-server-card+json","url":"https://a.example/1"},{"identifier":"urn:a","version":"1.0.0","type":"application/mcp-server-card+json","url":"https://a.example/2"}]}`,
			wantSpec: "1.0", wantCount: 2,
			wantEntries:  []sumEntry{{Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/1", ResolvedURL: "https://a.example/1", Version: "1.0.0"}},
			wantFindings: []sumFinding{f(E, "duplicate_identifier", "/entries/1")}},
		{name: "same identifier, different versions", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","version":"2.0.0","type":"application/mcp-server-card+json","url":"https://a.example/2"},{"identifier":"urn:a","version":"1.0.0","type":"application/mcp-server-card+json","url":"https://a.example/1"}]}`,
			wantSpec: "1.0", wantCount: 2,
			wantEntries: []sumEntry{
				{Index: 0, Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/2", ResolvedURL: "https://a.example/2", Version: "2.0.0"},
				{Index: 1, Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/1", ResolvedURL: "https://a.example/1", Version: "1.0.0"},
			}},
		{name: "unversioned then versioned", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/u"},{"identifier":"urn:a","version":"1.0.0","type":"application/mcp-server-card+json","url":"https://a.example/v"}]}`,
			wantSpec: "1.0", wantCount: 2,
			wantEntries: []sumEntry{
				card(0, "urn:a", "https://a.example/u"),
				{Index: 1, Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/v", ResolvedURL: "https://a.example/v", Version: "1.0.0"},
			},
			wantFindings: []sumFinding{f(W, "duplicate_identifier_unversioned", "/entries/1")}},
		{name: "versioned then unversioned", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","version":"1.0.0","type":"application/mcp-server-card+json","url":"https://a.example/v"},{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/u"}]}`,
			wantSpec: "1.0", wantCount: 2,
			wantEntries: []sumEntry{
				{Index: 0, Identifier: "urn:a", Type: sc, Essence: sc, URL: "https://a.example/v", ResolvedURL: "https://a.example/v", Version: "1.0.0"},
				card(1, "urn:a", "https://a.example/u"),
			},
			wantFindings: []sumFinding{f(W, "duplicate_identifier_unversioned", "/entries/1")}},
		{name: "skipped entry does not claim its identifier", body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json"},{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 2, wantEntries: []sumEntry{card(1, "urn:a", "https://a.example/card")},
			wantFindings: []sumFinding{f(E, "entry_no_url_or_data", "/entries/0")}},

		// Truncation.
		{name: "truncated", opts: Options{MaxEntries: 2}, body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card"},"bad",{"identifier":"urn:c","type":"application/mcp-server-card+json","url":"https://c.example/card"}, 4]}`,
			wantSpec: "1.0", wantCount: 4, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")},
			wantFindings: []sumFinding{f(E, "entry_not_object", "/entries/1"), f(W, "entries_truncated", "/entries")}},
		{name: "exactly at the limit", opts: Options{MaxEntries: 1}, body: `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/mcp-server-card+json","url":"https://a.example/card"}]}`,
			wantSpec: "1.0", wantCount: 1, wantEntries: []sumEntry{card(0, "urn:a", "https://a.example/card")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b *url.URL
			if tt.base != "" {
				b = mustURL(t, tt.base)
			}
			c, fl, err := Parse([]byte(tt.body), b, tt.opts)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Parse error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantFindings, summarizeFindings(fl)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %v", diff, fl)
			}
			for _, f := range fl {
				if f.Message == "" {
					t.Errorf("finding %s has no message", f.Code)
				}
			}
			if err != nil {
				if c != nil {
					t.Errorf("Parse returned a catalog with error %v", err)
				}
				return
			}
			if c.SpecVersion != tt.wantSpec {
				t.Errorf("SpecVersion = %q, want %q", c.SpecVersion, tt.wantSpec)
			}
			if c.EntryCount != tt.wantCount {
				t.Errorf("EntryCount = %d, want %d", c.EntryCount, tt.wantCount)
			}
			if diff := cmp.Diff(tt.wantEntries, summarizeEntries(c.Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseKeepsRawAndHost(t *testing.T) {
	body := []byte(`{"specVersion":"1.0","host":{"displayName":"Example"},"entries":[ {"identifier":"urn:a","type":"application/ai-catalog+json","data":{"specVersion":"1.0","entries":[]},"digest":"sha256:00","trustManifests":[{"contributor":"did:web:example.com"}]} ]}`)
	c, _, err := Parse(body, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantRaw := `{"identifier":"urn:a","type":"application/ai-catalog+json","data":{"specVersion":"1.0","entries":[]},"digest":"sha256:00","trustManifests":[{"contributor":"did:web:example.com"}]}`
	// Overwrite the caller's buffer: what Parse returned must not change.
	for i := range body {
		body[i] = 'x'
	}
	if got := string(c.Entries[0].Raw); got != wantRaw {
		t.Errorf("Raw = %s\nwant %s", got, wantRaw)
	}
	if got, want := string(c.Entries[0].Data), `{"specVersion":"1.0","entries":[]}`; got != want {
		t.Errorf("Data = %s, want %s", got, want)
	}
	if got, want := string(c.Host), `{"displayName":"Example"}`; got != want {
		t.Errorf("Host = %s, want %s", got, want)
	}
	if c.Entries[0].Path() != "/entries/0" || c.Entries[0].DataPath() != "/entries/0/data" {
		t.Errorf("Path, DataPath = %q, %q", c.Entries[0].Path(), c.Entries[0].DataPath())
	}
}

// TestParseInlineInheritsBase parses a nested inline catalog the way the
// crawler does: with the parent's base, so its relative URLs resolve there.
func TestParseInlineInheritsBase(t *testing.T) {
	body := []byte(`{"specVersion":"1.0","entries":[{"identifier":"urn:bundle","type":"application/ai-catalog+json","data":{"specVersion":"1.0","entries":[{"identifier":"urn:mcp","type":"application/mcp-server-card+json","url":"mcp/card.json"}]}}]}`)
	b := mustURL(t, "https://www.example.com/ai/catalog.json")
	outer, _, err := Parse(body, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inner, _, err := Parse(outer.Entries[0].Data, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inner.Entries[0].ResolvedURL, "https://www.example.com/ai/mcp/card.json"; got != want {
		t.Errorf("ResolvedURL = %q, want %q", got, want)
	}
}

func TestParseLargeCatalogTruncated(t *testing.T) {
	body := genCatalog(5000)
	c, fl, err := Parse(body, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.EntryCount != 5000 || len(c.Entries) != DefaultMaxEntries {
		t.Errorf("EntryCount, len(Entries) = %d, %d; want 5000, %d", c.EntryCount, len(c.Entries), DefaultMaxEntries)
	}
	if last := c.Entries[len(c.Entries)-1]; last.Index != DefaultMaxEntries-1 {
		t.Errorf("last kept entry index = %d", last.Index)
	}
	want := []sumFinding{f(finding.Warning, "entries_truncated", "/entries")}
	if diff := cmp.Diff(want, summarizeFindings(fl)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	c, fl, err = Parse(body, nil, Options{MaxEntries: 10000})
	if err != nil || len(c.Entries) != 5000 || len(fl) != 0 {
		t.Errorf("with MaxEntries 10000: %d entries, findings %v, err %v", len(c.Entries), fl, err)
	}
}

func TestParseManyDuplicateKeysCapped(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"specVersion":"1.0","entries":[],"k":0`)
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, `,"k":%d`, i)
	}
	sb.WriteString(`}`)
	_, fl, err := Parse([]byte(sb.String()), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != dupKeyLimit+1 {
		t.Fatalf("got %d findings, want %d", len(fl), dupKeyLimit+1)
	}
	if last := fl[len(fl)-1]; last.Code != "duplicate_json_key" || last.Path != "" || !strings.Contains(last.Message, "480 more") {
		t.Errorf("summary finding = %+v", last)
	}
}

func TestParseDeepNestingDoesNotPanic(t *testing.T) {
	// encoding/json rejects nesting beyond 10000; just inside that must be
	// walked without recursion.
	depth := 9000
	body := `{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"application/json","data":` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}]}`
	c, _, err := Parse([]byte(body), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) != 1 || len(c.Entries[0].Data) != 2*depth {
		t.Errorf("got %d entries, data length %d", len(c.Entries), len(c.Entries[0].Data))
	}
}

func TestEntryPath(t *testing.T) {
	if got := (Entry{Index: 3}).Path(); got != "/entries/3" {
		t.Errorf("Path() = %q", got)
	}
	if got := (Entry{Index: 3}).DataPath(); got != "/entries/3/data" {
		t.Errorf("DataPath() = %q", got)
	}
}
