package site

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// hostileStore answers with text a hostile card could carry: markup in
// every field and links that are not web URLs.
type hostileStore struct{ doc []byte }

const evil = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`

func (h hostileStore) row() store.SiteRow {
	return store.SiteRow{SiteKey: store.SiteKey{Kind: store.KindEndpoint, Subject: "https://evil.example/mcp"},
		URL: "https://evil.example/mcp?" + evil, Name: evil, Title: evil, Description: evil, Grade: "conformant",
		InCards: true, Outcome: "ok"}
}

func (h hostileStore) SiteServers(_ context.Context, f store.SiteFilter) (store.SitePage, error) {
	return store.SitePage{Rows: []store.SiteRow{h.row()}, Next: &store.SiteKey{Kind: store.KindEndpoint, Subject: "z"}}, nil
}

func (h hostileStore) SiteServer(_ context.Context, k store.SiteKey) (store.SiteDetail, bool, error) {
	if k.Subject != "https://evil.example/mcp" {
		return store.SiteDetail{}, false, nil
	}
	d := store.SiteDetail{SiteRow: h.row()}
	d.Cards = []store.SiteCard{{CardRow: store.CardRow{Key: evil, SourceURL: "javascript:alert(3)", WebsiteURL: "data:text/html,x",
		Name: evil, Grade: "conformant", Findings: finding.List{{Severity: finding.Error, Code: "x", Message: evil}}}}}
	d.Listings = []store.SiteListing{{Listing: store.Listing{Domain: evil, CatalogURL: "vbscript:x", Identifier: evil},
		Chain: []store.SiteCatalog{{URL: "javascript:alert(4)"}, {URL: "vbscript:x", HasDocument: true, SHA256: hostileCatalog,
			Findings: finding.List{{Severity: finding.Error, Code: "hostile_trust", Path: "/signature", Message: evil}}}}}}
	d.ToolNames, d.ToolCount = []string{evil}, 1
	return d, true, nil
}

func (h hostileStore) SiteCounts(context.Context) (store.SiteCounts, error) {
	return store.SiteCounts{Total: 1, ByGrade: []store.SiteCount{{Value: evil, Count: 1}}}, nil
}

func (h hostileStore) ProbeOutcomeCounts(context.Context, string) ([]store.OutcomeCount, error) {
	return []store.OutcomeCount{{Outcome: "ok", Count: 2}, {Outcome: "timeout", Count: 3}}, nil
}

// hostileCatalog is the hash the hostile listing's catalog is stored under.
var hostileCatalog = strings.Repeat("c", 64)

func (h hostileStore) SiteDocument(_ context.Context, sha string, max int) ([]byte, int64, string, bool, error) {
	if sha == hostileCatalog {
		doc := []byte(`{"specVersion":"1.0","entries":[]}`)
		return doc, int64(len(doc)), "application/json", true, nil
	}
	if sha != strings.Repeat("a", 64) {
		return nil, 0, "", false, nil
	}
	return h.doc[:min(len(h.doc), max)], int64(len(h.doc)), "text/html", true, nil
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var hrefs = regexp.MustCompile(`href="([^"]*)"`)

func TestPagesEscapeAndDropUnsafeLinks(t *testing.T) {
	h := Handler(Options{Store: hostileStore{}})
	key := Key(store.SiteKey{Kind: store.KindEndpoint, Subject: "https://evil.example/mcp"})
	for _, path := range []string{"/", "/?q=" + url.QueryEscape(evil), "/servers/" + key, "/summary"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d\n%s", path, resp.StatusCode, body)
		}
		if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
		for _, bad := range []string{"<script", "<img"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the page carries %q", path, bad)
			}
		}
		// Links that are not web URLs are shown as text, never as links.
		for _, m := range hrefs.FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[1], "/") && !strings.HasPrefix(m[1], "https://") && !strings.HasPrefix(m[1], "http://") {
				t.Errorf("%s: link %q", path, m[1])
			}
		}
	}
	// What the catalog says of the entry is shown, escaped as the rest.
	if _, body := get(t, h, "/servers/"+key); !strings.Contains(body, "hostile_trust") {
		t.Error("the listing does not show its catalog's findings")
	}
	_, body := get(t, h, "/summary")
	if !strings.Contains(body, "no answer in 15 seconds") {
		t.Error("the summary does not use the directory's words for timeout")
	}
}

func TestRaw(t *testing.T) {
	doc := []byte("<html><script>alert(1)</script>" + strings.Repeat("x", MaxRaw))
	h := Handler(Options{Store: hostileStore{doc: doc}})
	resp, body := get(t, h, "/raw/"+strings.Repeat("a", 64))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Document-Truncated") != "true" ||
		len(body) != MaxRaw {
		t.Errorf("raw: %d %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	for _, path := range []string{"/raw/" + strings.Repeat("b", 64), "/raw/AAAA", "/raw/..%2f..%2fetc", "/servers/x.abc", "/servers/e.!!"} {
		if resp, _ := get(t, h, path); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestKeyAndFilter(t *testing.T) {
	for _, k := range []store.SiteKey{{Kind: store.KindEndpoint, Subject: "https://a.example/mcp?x=1&y=ü"},
		{Kind: store.KindCard, Subject: "https://c.example/.well-known/ai-catalog.json#/entries/0/data"}} {
		got, err := ParseKey(Key(k))
		if err != nil || got != k {
			t.Errorf("ParseKey(Key(%v)) = %v, %v", k, got, err)
		}
		if s := Key(k); url.PathEscape(s) != s {
			t.Errorf("key %q is not URL-safe", s)
		}
	}
	after := Key(store.SiteKey{Kind: store.KindCard, Subject: "k"})
	f, err := ParseFilter(url.Values{"q": {"50%"}, "grade": {"none"}, "source": {"registry"}, "after": {after}, "limit": {"7"}}, 30)
	want := store.SiteFilter{Q: "50%", Grade: "none", Source: "registry", After: store.SiteKey{Kind: store.KindCard, Subject: "k"}, Limit: 7}
	if err != nil || !cmp.Equal(f, want) {
		t.Errorf("ParseFilter = %+v, %v", f, err)
	}
	for _, bad := range []url.Values{{"source": {"x"}}, {"after": {"zz"}}, {"limit": {"0"}}, {"q": {strings.Repeat("q", 201)}}} {
		if _, err := ParseFilter(bad, 30); err == nil {
			t.Errorf("ParseFilter(%v) accepted", bad)
		}
	}
}

// The summary links each count to the index filtered to exactly those
// servers: a namespace never checked is "unknown", since "none" is a
// method (checked, nothing verified it).
func TestCountLinks(t *testing.T) {
	counts := []store.SiteCount{{Value: "", Count: 1}, {Value: "none", Count: 2}, {Value: "http", Count: 3}}
	var got []string
	for _, param := range []string{"ns", "grade"} {
		for _, v := range countViews(param, counts, func(string) string { return "" }) {
			got = append(got, v.Link)
		}
	}
	want := []string{"/?ns=unknown", "/?ns=none", "/?ns=http", "/?grade=none", "/?grade=none", "/?grade=http"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}
