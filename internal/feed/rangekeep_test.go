package feed_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

type served struct {
	code       int
	etag, body string
}

func serveOnce(h http.Handler, path string, header ...string) served {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return served{rec.Code, rec.Header().Get("ETag"), rec.Body.String()}
}

// TestKeptListPagesAreWhatAReadGives: list pages are kept across writes
// that do not reach the span of the feed they show, and only those. After
// each write of every kind the store knows (new servers before, inside and
// after a page, a re-crawl, a probe, a probe decision, an endpoint moving
// to a better card, Registry remotes, a reconciliation, a namespace check,
// categories, a catalog gone and listed again), every page served equals
// a fresh read by a server that kept nothing; a page whose ETag did not
// move has not changed; If-None-Match gets a 304 exactly when it names the
// page as it is; and the pages the write did not reach were not read again.
func TestKeptListPagesAreWhatAReadGives(t *testing.T) {
	ctx := context.Background()
	db, clock := filledStore(t, 12)
	rc := &readCounter{DB: db}
	h := feed.Handler(feed.ServerOptions{Store: rc})
	cursor := func(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }
	// Each page's span, from its cursor (none: the start) to the entry
	// after it, or to the end; dN is domain N's fetched card, dNi its
	// inline one (which sorts first), as they move with the writes below.
	pages := []string{
		"limit=3", // to d1i; to d1a once d0 has a third card (step 3)
		"limit=3&cursor=" + cursor("https://d000004.example/card-a.json"), // after d4a, to d6a
		"limit=100",                // to the end
		"limit=2&search=d000006",   // the last page: to the end
		"limit=4&grade=conformant", // to d4a; to d3a from step 3
		"limit=3&outcome=ok",       // to d4a; to d4i from step 5, to d4a from step 7
		"limit=3&version=1.2.0",    // no entries, and more follow: to d0i
		// Not kept by their span (the store version instead): changes
		// selected by time, and the Registry's entries.
		"limit=3&updated_since=2000-01-01T00:00:00Z",
		"limit=3&source=all",
	}
	endpoint := func(d int, card string) string { return fmt.Sprintf("https://mcp.%s/%s", feedtest.Domain(d), card) }
	save := func(domain string, cards ...feedtest.Card) error { return feedtest.Save(ctx, db, 2, domain, cards...) }
	steps := []struct {
		name  string
		write func() error
		// kept are the pages (indexes into pages) the write cannot
		// reach: served again without a read.
		kept []int
	}{
		{"nothing", func() error { return nil }, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"a server after every page", func() error {
			return save("zz1.example", feedtest.Card{Key: "https://zz1.example/card.json", Name: "com.example/zz1",
				Version: "1", Remotes: []string{"https://mcp.zz1.example/m"}})
		}, []int{0, 1, 4, 5, 6}},
		{"a server inside the first page", func() error {
			return save("x1.example", feedtest.Card{Key: "https://d000000.example/b-extra.json", Name: "com.example/x1",
				Version: "1", Remotes: []string{"https://mcp.x1.example/m"}})
		}, []int{1, 6}},
		{"a re-crawl of a domain of the second page", func() error {
			return feedtest.Fill(ctx, db, feedtest.Options{Domains: 1, From: 6, RunID: 3})
		}, []int{0, 4, 5, 6}},
		{"a probe in the first page", func() error {
			tools := 4
			return db.AddProbe(ctx, 3, store.ProbeRow{RemoteNorm: endpoint(0, "b"), URL: endpoint(0, "b"),
				ProbedAt: "2026-11-03T00:00:00Z", Outcome: "ok", Transport: "sse", Protocol: "2025-06-18",
				ServerName: "srv", ServerVersion: "2", ToolCount: &tools, Result: `{"outcome":"ok"}`})
		}, []int{1}},
		{"a probe decision in the second page", func() error {
			return db.AddProbeDecision(ctx, store.ProbeDecision{RunID: 3, RemoteNorm: endpoint(5, "b"),
				URL: endpoint(5, "b"), Decision: "skip", Reason: "budget"})
		}, []int{0, 4, 5, 6}},
		{"an endpoint of the first page described by a better card", func() error {
			return save("y2.example", feedtest.Card{Key: "https://y2.example/card.json", Name: "com.example/y2",
				Version: "1", Remotes: []string{endpoint(1, "a")}})
		}, []int{0, 1, 6}},
		{"Registry remotes of an endpoint of the second page", func() error {
			return db.ReplaceRegistryRemotes(ctx, store.RegistryEntryDoc{Source: "https://registry.example",
				Name: "com.example.d000005/b", Version: "1", ChangedAt: "2026-11-03T00:00:00Z", ServerJSON: `{}`}, "sha",
				[]store.RegistryRemote{{URLNorm: endpoint(5, "b"), URL: endpoint(5, "b"), Type: "sse"}})
		}, []int{0, 4, 5, 6}},
		{"a reconciliation of a card of the first page", func() error {
			return db.ReplaceReconcile(ctx, []store.ReconcileRow{{Kind: "pair", CardKey: "https://d000000.example/card-a.json",
				CardName: "com.example.d000000/a", Source: "https://registry.example", Name: "com.example.d000000/a",
				Version: "1", Status: "active", Basis: "remote_url", Detail: "x", Diffs: "[]",
				ComputedAt: "2026-11-03T00:00:00Z"}})
		}, []int{1, 6}},
		{"a namespace check of the second page's names", func() error {
			return db.SaveNamespaces(ctx, []store.NamespaceRow{{Namespace: "com.example.d000006", Kind: "domain",
				Domain: "d000006.example", Method: "none", Result: `{"found":false}`, CheckedAt: "2026-11-03T00:00:00Z"}})
		}, []int{0, 4, 5, 6}},
		{"categories", func() error {
			return db.SaveCategories(ctx, []store.CategoryRow{{Kind: store.KindEndpoint, Subject: endpoint(0, "b"),
				Category: "travel", Source: "name"}})
		}, []int{0, 1, 2, 3, 4, 5, 6}}, // the list prints no category; the store version moves
		{"the catalog of a domain of the first page gone", func() error { return save(feedtest.Domain(1)) }, []int{1, 6}},
		{"the domain listed again", func() error {
			return save(feedtest.Domain(1), feedtest.Card{Key: "https://d000001.example/card-a.json",
				Name: "com.example.d000001/a", Version: "9", Remotes: []string{endpoint(1, "c")}})
		}, []int{1, 6}},
	}

	prev := make([]served, len(pages))
	for i, p := range pages {
		prev[i] = serveOnce(h, "/v0.1/servers?"+p)
		if prev[i].code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, prev[i].code, prev[i].body)
		}
	}
	for _, step := range steps {
		clock.Advance(time.Second)
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		fresh := feed.Handler(feed.ServerOptions{Store: db}) // keeps nothing yet
		for i, p := range pages {
			path := "/v0.1/servers?" + p
			before := rc.reads.Load()
			got := serveOnce(h, path)
			read := rc.reads.Load() != before
			want := serveOnce(fresh, path)
			if got.code != http.StatusOK || got.body != want.body {
				t.Errorf("after %s, %s: served %d, not what a read gives: %s", step.name, p, got.code,
					firstDifference(got.body, want.body))
			}
			if kept := slices.Contains(step.kept, i); read == kept {
				t.Errorf("after %s, %s: read again %v, want %v", step.name, p, read, !kept)
			}
			if got.etag == prev[i].etag && got.body != prev[i].body {
				t.Errorf("after %s, %s: the page changed but kept its ETag %s", step.name, p, got.etag)
			}
			if nm := serveOnce(h, path, "If-None-Match", got.etag); nm.code != http.StatusNotModified || nm.etag != got.etag {
				t.Errorf("after %s, %s: If-None-Match its ETag: %d %s, want 304 %s", step.name, p, nm.code, nm.etag, got.etag)
			}
			if got.etag != prev[i].etag {
				old := serveOnce(h, path, "If-None-Match", prev[i].etag)
				if old.code != http.StatusOK || old.body != got.body || old.etag != got.etag {
					t.Errorf("after %s, %s: If-None-Match the ETag before: %d %s, want 200 and the page as it is",
						step.name, p, old.code, old.etag)
				}
			}
			prev[i] = got
		}
	}
}

// firstDifference shows where two bodies part.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-60, 0)
	return fmt.Sprintf("at byte %d, got …%s…, want …%s…", i, got[from:min(i+60, len(got))], want[from:min(i+60, len(want))])
}

// TestKeptListPageCrowd: a crowd asking for a kept page after a write
// that did not reach it shares one check and reads nothing; after one
// that did, it shares one read.
func TestKeptListPageCrowd(t *testing.T) {
	ctx := context.Background()
	db, _ := filledStore(t, 8)
	rc := &readCounter{DB: db}
	h := feed.Handler(feed.ServerOptions{Store: rc})
	const path = "/v0.1/servers?limit=3"
	first := serveOnce(h, path)
	crowd := func(what string, wantReads int32) {
		t.Helper()
		before := rc.reads.Load()
		var wg sync.WaitGroup
		got := make([]served, 20)
		for i := range got {
			wg.Go(func() { got[i] = serveOnce(h, path) })
		}
		wg.Wait()
		fresh := serveOnce(feed.Handler(feed.ServerOptions{Store: db}), path)
		for i, g := range got {
			if g.body != fresh.body {
				t.Errorf("%s: client %d got %s", what, i, firstDifference(g.body, fresh.body))
			}
		}
		if n := rc.reads.Load() - before; n != wantReads {
			t.Errorf("%s: %d reads, want %d", what, n, wantReads)
		}
	}
	if err := feedtest.Save(ctx, db, 2, "zz.example", feedtest.Card{Key: "https://zz.example/card.json",
		Name: "com.example/zz", Version: "1", Remotes: []string{"https://mcp.zz.example/m"}}); err != nil {
		t.Fatal(err)
	}
	crowd("after a write after the page", 0)
	if again := serveOnce(h, path); again.etag != first.etag {
		t.Errorf("the kept page's ETag moved from %s to %s", first.etag, again.etag)
	}
	if err := feedtest.Save(ctx, db, 2, "aa.example", feedtest.Card{Key: "https://aa.example/card.json",
		Name: "com.example/aa", Version: "1", Remotes: []string{"https://mcp.aa.example/m"}}); err != nil {
		t.Fatal(err)
	}
	crowd("after a write into the page", 1)
}
