package simweb

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseArchive(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []archiveFile
	}{
		{"comment only", "just a comment\n", nil},
		{
			"two files, comment dropped, bytes kept",
			"comment\n-- a.example/x.json --\n{\"a\":1}\n-- b.example/ --\nline1\n\nline3",
			[]archiveFile{
				{Name: "a.example/x.json", Data: []byte("{\"a\":1}\n")},
				{Name: "b.example/", Data: []byte("line1\n\nline3")},
			},
		},
		{"empty file", "-- e.example/empty --\n", []archiveFile{{Name: "e.example/empty"}}},
		{"crlf marker", "-- c.example/x --\r\nbody\r\n", []archiveFile{{Name: "c.example/x", Data: []byte("body\r\n")}}},
		{"not a marker", "-- a.example/x --\n--not-- a marker\n", []archiveFile{{Name: "a.example/x", Data: []byte("--not-- a marker\n")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArchive([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseArchive (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := parseArchive([]byte("--  --\n")); !errors.Is(err, errFixture) {
		t.Errorf("nameless marker: err = %v, want errFixture", err)
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct{ in, host, path string }{
		{"Example.COM/.well-known/ai-catalog.json", "example.com", "/.well-known/ai-catalog.json"},
		{"example.org", "example.org", "/"},
		{"example.org/a?b=c", "example.org", "/a?b=c"},
	}
	for _, tt := range tests {
		h, p, err := splitName(tt.in)
		if err != nil || h != tt.host || p != tt.path {
			t.Errorf("splitName(%q) = %q, %q, %v; want %q, %q", tt.in, h, p, err, tt.host, tt.path)
		}
	}
	for _, bad := range []string{"", "/path", "host:443/x", "a b/x"} {
		if _, _, err := splitName(bad); !errors.Is(err, errFixture) {
			t.Errorf("splitName(%q) err = %v, want errFixture", bad, err)
		}
	}
}

// view is the comparable part of a resource.
type view struct {
	Status        int
	Header        http.Header
	Body          string
	RequireAccept string
	Behavior      string
	Pad           int
	ETag          string
	LastModified  time.Time
	MCPKind       string
	MCPOpts       MCPOptions
}

func viewOf(r *resource) view {
	return view{r.status, r.header, string(r.body), r.requireAccept, r.behavior, r.pad, r.etag, r.lastModified, r.mcpKind, r.mcpOpts}
}

func TestParseResource(t *testing.T) {
	lm := time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, file, data string
		want             view
	}{
		{
			"plain json", "a.example/x.json", "{}\n",
			view{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: "{}\n"},
		},
		{
			"plain html", "a.example/index.html", "<p>hi</p>",
			view{Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: "<p>hi</p>"},
		},
		{
			"no extension", "a.example/github/server-card", "x",
			view{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "x"},
		},
		{
			"scripted",
			"cards.example.net/card",
			"HTTP 200\nContent-Type: application/mcp-server-card+json\nETag: \"v1\"\nLast-Modified: Tue, 01 Sep 2026 10:00:00 GMT\n" +
				"Simweb-Require-Accept: Application/MCP-Server-Card+JSON; q=1\nSimweb-Behavior: drop-once\nSimweb-Pad: 100\n\n{\"a\":1}\n",
			view{
				Status: 200,
				Header: http.Header{
					"Content-Type":  {"application/mcp-server-card+json"},
					"Etag":          {`"v1"`},
					"Last-Modified": {"Tue, 01 Sep 2026 10:00:00 GMT"},
				},
				Body: "{\"a\":1}\n", RequireAccept: "application/mcp-server-card+json", Behavior: "drop-once",
				Pad: 100, ETag: `"v1"`, LastModified: lm,
			},
		},
		{
			"redirect without body", "moved.example/x.json", "HTTP 301\nLocation: https://www.moved.example/catalog.json\n\n",
			view{Status: 301, Header: http.Header{"Location": {"https://www.moved.example/catalog.json"}}},
		},
		{
			"status without headers", "a.example/x.json", "HTTP 500\n",
			view{Status: 500, Header: http.Header{}},
		},
		{
			"mcp mount", "mcp.example/mcp", "SIMWEB-MCP go-sdk-json name=demo version=2.0.0 tools=5\n",
			view{MCPKind: "go-sdk-json", MCPOpts: MCPOptions{Name: "demo", Version: "2.0.0", Tools: 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseResource(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, viewOf(r)); diff != "" {
				t.Errorf("parseResource (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseResourceErrors(t *testing.T) {
	for _, data := range []string{
		"HTTP abc\n\n",
		"HTTP 200\nno colon here\n\n",
		"HTTP 200\nSimweb-Behavior: explode\n\n",
		"HTTP 200\nSimweb-Pad: -1\n\n",
		"HTTP 200\nSimweb-Unknown: 1\n\n",
		"HTTP 200\nLast-Modified: yesterday\n\n",
		"SIMWEB-MCP\n",
		"SIMWEB-MCP no-such-kind\n",
		"SIMWEB-MCP go-sdk-json colour=red\n",
		"SIMWEB-MCP go-sdk-json tools=x\n",
	} {
		if _, err := parseResource("a.example/x", []byte(data)); !errors.Is(err, errFixture) {
			t.Errorf("parseResource(%q) err = %v, want errFixture", data, err)
		}
	}
}

func TestAcceptLists(t *testing.T) {
	const card = "application/mcp-server-card+json"
	tests := []struct {
		accept string
		want   bool
	}{
		{"application/mcp-server-card+json", true},
		{"application/json;q=0.5, Application/MCP-Server-Card+JSON;q=1", true},
		{"application/json", false},
		{"*/*", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := acceptLists(tt.accept, card); got != tt.want {
			t.Errorf("acceptLists(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}
