package servercard

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	base := func() *Card {
		return &Card{
			Schema: SchemaURL, Name: "com.example/weather", Version: "1.0.0", Description: "Weather.",
			Title: "Weather", WebsiteURL: "https://example.com",
			Repository: &Repository{URL: "https://example.com/repo", Source: "github"},
			Icons:      []Icon{{Src: "https://example.com/i.png", Sizes: []string{"48x48", "any"}}},
			Remotes: []Remote{{
				Type: TransportStreamableHTTP, URL: "https://api.example.com/mcp/",
				Headers:                   []KeyValueInput{{Name: "X-API-Key", Input: Input{IsRequired: true, IsSecret: true}}},
				Variables:                 map[string]Input{"tenant": {Default: "a"}},
				SupportedProtocolVersions: []string{"2025-06-18", "2025-11-25"},
			}},
			Meta: json.RawMessage(`{"b":1,"a":{"x":true}}`),
		}
	}
	tests := []struct {
		name   string
		a, b   *Card
		change func(c *Card)
		want   []Diff
	}{
		{name: "identical", want: nil},
		{name: "both nil", a: nil, b: nil, want: nil},
		{
			name:   "scalars",
			change: func(c *Card) { c.Title = "Weather Pro"; c.Version = "1.1.0" },
			want:   []Diff{{Field: "version", Old: "1.0.0", New: "1.1.0"}, {Field: "title", Old: "Weather", New: "Weather Pro"}},
		},
		{
			name:   "repository removed",
			change: func(c *Card) { c.Repository = nil },
			want: []Diff{
				{Field: "repository.url", Old: "https://example.com/repo"},
				{Field: "repository.source", Old: "github"},
			},
		},
		{
			name:   "repository id added",
			change: func(c *Card) { c.Repository.ID = "42" },
			want:   []Diff{{Field: "repository.id", New: "42"}},
		},
		{
			name: "remote url spelled differently is the same remote",
			change: func(c *Card) {
				c.Remotes[0].URL = "HTTPS://API.Example.com:443/mcp"
				c.Remotes[0].Type = TransportSSE
			},
			want: []Diff{{Field: "remotes[https://api.example.com/mcp].type", Old: "streamable-http", New: "sse"}},
		},
		{
			name: "remote moved to another url",
			change: func(c *Card) {
				c.Remotes[0].URL = "https://api.example.com/v2/mcp"
				c.Remotes[0].Headers = nil
				c.Remotes[0].Variables = nil
			},
			want: []Diff{
				{Field: "remotes[https://api.example.com/mcp]", Old: `{"type":"streamable-http","url":"https://api.example.com/mcp/","headers":[{"name":"X-API-Key","isRequired":true,"isSecret":true}],"variables":{"tenant":{"default":"a"}},"supportedProtocolVersions":["2025-06-18","2025-11-25"]}`},
				{Field: "remotes[https://api.example.com/v2/mcp]", New: `{"type":"streamable-http","url":"https://api.example.com/v2/mcp","supportedProtocolVersions":["2025-06-18","2025-11-25"]}`},
			},
		},
		{
			name: "templated remotes compare as templates",
			change: func(c *Card) {
				c.Remotes = append(c.Remotes, Remote{Type: TransportSSE, URL: "https://{Tenant}.example.com/sse"})
			},
			want: []Diff{{Field: "remotes[https://{Tenant}.example.com/sse]", New: `{"type":"sse","url":"https://{Tenant}.example.com/sse"}`}},
		},
		{
			name: "headers keyed case-insensitively, field changes",
			change: func(c *Card) {
				c.Remotes[0].Headers[0].Name = "x-api-key"
				c.Remotes[0].Headers[0].IsSecret = false
				c.Remotes[0].Headers[0].Choices = []string{"a"}
			},
			want: []Diff{
				{Field: "remotes[https://api.example.com/mcp].headers[x-api-key].isSecret", Old: "true", New: "false"},
				{Field: "remotes[https://api.example.com/mcp].headers[x-api-key].choices", New: `["a"]`},
			},
		},
		{
			name: "header added, variable changed and added",
			change: func(c *Card) {
				c.Remotes[0].Headers = append(c.Remotes[0].Headers, KeyValueInput{Name: "X-Region"})
				c.Remotes[0].Variables = map[string]Input{"tenant": {Default: "b"}, "region": {}}
			},
			want: []Diff{
				{Field: "remotes[https://api.example.com/mcp].headers[x-region]", New: `{"name":"X-Region"}`},
				{Field: "remotes[https://api.example.com/mcp].variables[tenant].default", Old: "a", New: "b"},
				{Field: "remotes[https://api.example.com/mcp].variables[region]", New: `{}`},
			},
		},
		{
			name:   "protocol versions compared as a set",
			change: func(c *Card) { c.Remotes[0].SupportedProtocolVersions = []string{"2025-11-25", "2025-06-18"} },
			want:   nil,
		},
		{
			name:   "protocol version dropped",
			change: func(c *Card) { c.Remotes[0].SupportedProtocolVersions = []string{"2025-11-25"} },
			want: []Diff{{Field: "remotes[https://api.example.com/mcp].supportedProtocolVersions",
				Old: `["2025-06-18","2025-11-25"]`, New: `["2025-11-25"]`}},
		},
		{
			name: "duplicate remotes are both compared",
			change: func(c *Card) {
				c.Remotes = append(c.Remotes, Remote{Type: TransportSSE, URL: "https://api.example.com/mcp"})
			},
			want: []Diff{{Field: "remotes[https://api.example.com/mcp#2]", New: `{"type":"sse","url":"https://api.example.com/mcp"}`}},
		},
		{
			name:   "icons keyed by src",
			change: func(c *Card) { c.Icons[0].Theme = "dark"; c.Icons[0].Sizes = []string{"any", "48x48"} },
			want:   []Diff{{Field: "icons[https://example.com/i.png].theme", New: "dark"}},
		},
		{
			name:   "meta member order is not a change",
			change: func(c *Card) { c.Meta = json.RawMessage(`{ "a": {"x": true}, "b": 1 }`) },
			want:   nil,
		},
		{
			name:   "meta value change",
			change: func(c *Card) { c.Meta = json.RawMessage(`{"a":{"x":false},"b":1}`) },
			want:   []Diff{{Field: "_meta", Old: `{"a":{"x":true},"b":1}`, New: `{"a":{"x":false},"b":1}`}},
		},
		{
			name: "nil against a card",
			a:    nil,
			b:    &Card{Name: "com.example/x", Remotes: []Remote{{Type: "sse", URL: "https://example.com/sse"}}},
			want: []Diff{
				{Field: "name", New: "com.example/x"},
				{Field: "remotes[https://example.com/sse]", New: `{"type":"sse","url":"https://example.com/sse"}`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.a, tt.b
			if tt.a == nil && tt.b == nil && tt.name != "both nil" {
				a, b = base(), base()
			}
			if tt.change != nil {
				tt.change(b)
			}
			got := Compare(a, b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compare mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
