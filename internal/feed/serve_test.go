package feed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

type client struct {
	t   *testing.T
	url string
}

func newServer(t *testing.T, db *store.DB) client {
	t.Helper()
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: db}))
	t.Cleanup(srv.Close)
	return client{t, srv.URL}
}

// get returns the status, headers and body of a GET with optional headers.
func (c client) get(path string, header ...string) (int, http.Header, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

type listPage struct {
	Servers []struct {
		Server struct{ Name, Version string }
		Meta   struct {
			Discovery struct {
				CardKey   string
				UpdatedAt string
				Removed   *struct{ At, Reason string }
			} `json:"io.github.cardcrawl/discovery"`
		} `json:"_meta"`
	}
	Metadata struct {
		Count      int
		NextCursor string
	}
}

func (c client) list(query string) listPage {
	c.t.Helper()
	code, _, body := c.get("/v0.1/servers?" + query)
	if code != http.StatusOK {
		c.t.Fatalf("%s: %d %s", query, code, body)
	}
	var p listPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		c.t.Fatal(err)
	}
	if p.Metadata.Count != len(p.Servers) {
		c.t.Errorf("%s: count %d for %d servers", query, p.Metadata.Count, len(p.Servers))
	}
	return p
}

// insert lists two new servers from a new domain: one whose card key sorts
// before every existing one, one after.
func insert(t *testing.T, db *store.DB, n int) {
	t.Helper()
	ctx := context.Background()
	d := fmt.Sprintf("new%03d.example", n)
	if err := feedtest.Save(ctx, db, 2, d,
		feedtest.Card{Key: fmt.Sprintf("https://a%03d.example/card.json", n), Name: fmt.Sprintf("com.example/early-%d", n),
			Version: "1", Remotes: []string{fmt.Sprintf("https://a%03d.example/mcp", n)}},
		feedtest.Card{Key: fmt.Sprintf("https://z%03d.example/card.json", n), Name: fmt.Sprintf("com.example/late-%d", n),
			Version: "1", Remotes: []string{fmt.Sprintf("https://z%03d.example/mcp", n)}}); err != nil {
		t.Fatal(err)
	}
}

// TestListPagingWithInserts walks /v0.1/servers to the end while servers
// are added between pages, before and after the cursor: every server
// listed at the start is served exactly once.
func TestListPagingWithInserts(t *testing.T) {
	db, _ := filledStore(t, 30)
	c := newServer(t, db)
	want := map[string]bool{}
	for _, s := range c.list("limit=100").Servers {
		want[s.Meta.Discovery.CardKey] = true
	}
	if len(want) < 50 {
		t.Fatalf("only %d entries to page through", len(want))
	}
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		q := "limit=7"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := c.list(q)
		for _, s := range p.Servers {
			seen[s.Meta.Discovery.CardKey]++
		}
		insert(t, db, pages)
		if cursor = p.Metadata.NextCursor; cursor == "" {
			break
		}
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("%s served %d times, want once", k, seen[k])
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s served %d times", k, n)
		}
	}
}

var nextLink = regexp.MustCompile(`<a href="(/\?after=[^"]+)" rel="next">`)

// TestPagePagingWithInserts does the same walk through the HTML page's
// next links, 50 servers a page.
func TestPagePagingWithInserts(t *testing.T) {
	db, _ := filledStore(t, 40)
	c := newServer(t, db)
	var want []string
	if err := db.EachFeedServer(context.Background(), store.FeedQuery{}, func(s *store.FeedServer) error {
		if s.Endpoint != "" {
			want = append(want, s.Endpoint)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	path := "/"
	for pages := 0; path != ""; pages++ {
		if pages > 20 {
			t.Fatal("paging does not end")
		}
		code, _, body := c.get(path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		if n := strings.Count(body, "<tr><td>"); n > 50 {
			t.Errorf("%s: %d rows, want at most 50", path, n)
		}
		for _, e := range want {
			if strings.Contains(body, "<code>"+e+"</code>") {
				seen[e]++
			}
		}
		insert(t, db, pages)
		path = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	for _, e := range want {
		if seen[e] != 1 {
			t.Errorf("%s shown %d times, want once", e, seen[e])
		}
	}
}

// TestETagAndNotModified: every document has an ETag; the same ETag in
// If-None-Match gets a 304 with no body, and after the database changes
// the document is served again with a new ETag.
func TestETagAndNotModified(t *testing.T) {
	db, _ := filledStore(t, 5)
	c := newServer(t, db)
	paths := []string{"/", "/?q=d000001", "/v0.1/servers", "/v0.1/servers?limit=2",
		"/v0.1/servers/com.example.d000001%2Fa/versions", "/v0.1/servers/com.example.d000001%2Fa/versions/latest"}
	for _, f := range feed.Formats {
		paths = append(paths, f.Path)
	}
	etags := map[string]string{}
	for _, p := range paths {
		code, h, _ := c.get(p)
		etag := h.Get("ETag")
		if code != http.StatusOK || etag == "" || !strings.Contains(h.Get("Cache-Control"), "max-age=") {
			t.Fatalf("%s: %d, ETag %q, Cache-Control %q", p, code, etag, h.Get("Cache-Control"))
		}
		etags[p] = etag
		code, h, body := c.get(p, "If-None-Match", etag)
		if code != http.StatusNotModified || body != "" || h.Get("ETag") != etag {
			t.Errorf("%s with its ETag: %d %q, want 304 and no body", p, code, body)
		}
		if code, _, _ := c.get(p, "If-None-Match", `"other", W/`+etag); code != http.StatusNotModified {
			t.Errorf("%s with its ETag in a list, weak: %d, want 304", p, code)
		}
	}
	insert(t, db, 1)
	for _, p := range paths {
		code, h, _ := c.get(p, "If-None-Match", etags[p])
		if code != http.StatusOK || h.Get("ETag") == etags[p] {
			t.Errorf("%s after a change: %d, ETag %q (was %q), want 200 and a new ETag", p, code, h.Get("ETag"), etags[p])
		}
	}
}

// TestSearchAndUpdatedSince: search is a case-insensitive substring of the
// name; updated_since lists what changed after it, including entries whose
// servers went away, and a re-crawl that found nothing new is not a change.
func TestSearchAndUpdatedSince(t *testing.T) {
	db, clock := filledStore(t, 12)
	c := newServer(t, db)
	got := func(p listPage) []string {
		var names []string
		for _, s := range p.Servers {
			name := s.Server.Name
			if s.Meta.Discovery.Removed != nil {
				name += " (removed: " + s.Meta.Discovery.Removed.Reason + ")"
			}
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	if names := got(c.list("search=D000011%2FB")); !slices.Equal(names, []string{"com.example.d000011/b"}) {
		t.Errorf("search D000011/B: %v", names)
	}
	if names := got(c.list("search=d00001")); len(names) != 4 {
		t.Errorf("search d00001: %v, want the 4 servers of d000010 and d000011", names)
	}
	if names := got(c.list("search=" + url.QueryEscape("%"))); len(names) != 0 {
		t.Errorf("search %%: %v, want none (a literal percent sign)", names)
	}

	clock.Advance(time.Hour)
	since := clock.Now().Format(time.RFC3339Nano)
	clock.Advance(time.Second)
	ctx := context.Background()
	// d000003 is crawled again with nothing new; d000004 loses its
	// catalog (d000005 lists its card a too); d000005 now lists only a new
	// card.
	if err := feedtest.Fill(ctx, db, feedtest.Options{From: 3, Domains: 1, RunID: 2}); err != nil {
		t.Fatal(err)
	}
	if err := feedtest.Save(ctx, db, 2, feedtest.Domain(4)); err != nil {
		t.Fatal(err)
	}
	if err := feedtest.Save(ctx, db, 2, feedtest.Domain(5), feedtest.Card{Key: "https://d000005.example/new.json",
		Name: "com.example.d000005/new", Version: "2", Remotes: []string{"https://mcp.d000005.example/new"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"com.example.d000004/a (removed: not_listed)", "com.example.d000004/b (removed: catalog_gone)",
		"com.example.d000005/a (removed: not_listed)", "com.example.d000005/b (removed: not_listed)", "com.example.d000005/new"}
	if names := got(c.list("updated_since=" + url.QueryEscape(since))); !slices.Equal(names, want) {
		t.Errorf("updated_since: %v\nwant %v", names, want)
	}
	if code, _, _ := c.get("/v0.1/servers?updated_since=2026-11-01"); code != http.StatusBadRequest {
		t.Errorf("a bare date: %d, want 400", code)
	}
	for _, n := range got(c.list("limit=100")) {
		if strings.HasPrefix(n, "com.example.d000004/") {
			t.Errorf("a removed server is listed without updated_since: %s", n)
		}
	}
}

// TestServeSource: the feed files and the list API take source (all adds
// the servers only the Registry declares; the filled store has none, so
// the records are the cards'), and a value that is no source is a 400
// naming the parameter.
func TestServeSource(t *testing.T) {
	db, _ := filledStore(t, 3)
	c := newServer(t, db)
	_, _, cards := c.get("/feed.jsonl")
	for path, want := range map[string]int{
		"/feed.jsonl?source=all":                         http.StatusOK,
		"/feed.csv?source=registry":                      http.StatusOK,
		"/feed.json?source=all":                          http.StatusOK,
		"/.well-known/ai-catalog.json?source=all":        http.StatusOK,
		"/v0.1/servers?source=all":                       http.StatusOK,
		"/v0.1/servers?source=registry":                  http.StatusOK,
		"/feed.jsonl?source=cards":                       http.StatusBadRequest,
		"/v0.1/servers?source=card&grade=conformant":     http.StatusOK,
		"/feed.jsonl?source=card&outcome=requires_login": http.StatusOK,
	} {
		code, _, body := c.get(path)
		if code != want {
			t.Errorf("%s: %d, want %d: %s", path, code, want, body)
		}
		if want == http.StatusBadRequest && !strings.Contains(body, "source") && !strings.Contains(body, "category") {
			t.Errorf("%s: the problem does not name the source: %s", path, body)
		}
	}
	if _, _, all := c.get("/feed.jsonl?source=all"); all != cards {
		t.Error("source=all without Registry-only servers differs from the cards' feed")
	}
	if _, _, reg := c.get("/feed.csv?source=registry"); strings.Count(reg, "\n") != 1 {
		t.Errorf("source=registry with no Registry entries: %q, want the header only", reg)
	}
}
