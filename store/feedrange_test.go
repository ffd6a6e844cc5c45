package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

func TestEntryRanges(t *testing.T) { eachDialect(t, testEntryRanges) }

// testEntryRanges: FeedEntryPage reads what FeedEntries reads, with the
// span the page depends on; its mark holds across a write outside the
// span and not across one inside it, and the version CheckEntryRange
// gives follows the store's.
func testEntryRanges(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 8, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	q := store.EntryQuery{Limit: 3, After: "https://d000002.example/card-a.json"}
	page, err := db.FeedEntryPage(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	entries, more, err := db.FeedEntries(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(entries, page.Entries, cmpopts.IgnoreUnexported(store.FeedEntry{}, store.FeedServer{})); diff != "" || more != page.More {
		t.Errorf("FeedEntryPage differs from FeedEntries (more %v, %v):\n%s", page.More, more, diff)
	}
	want := store.EntryRange{After: q.After, Through: "https://d000004.example/card-a.json"}
	if !page.Keep || page.Range.After != want.After || page.Range.Through != want.Through || page.Range.ToEnd ||
		page.Range.Mark.Records == 0 {
		t.Fatalf("page kept %v, range %+v; want one after %s through %s", page.Keep, page.Range, want.After, want.Through)
	}
	version, err := db.FeedVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if page.Version != version {
		t.Errorf("page read at %s, store at %s", page.Version, version)
	}

	check := func(what string, wantStill bool) {
		t.Helper()
		v, still, err := db.CheckEntryRange(ctx, page.Range)
		if err != nil {
			t.Fatal(err)
		}
		now, err := db.FeedVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if still != wantStill || v != now {
			t.Errorf("after %s: still %v at %s (store at %s), want %v", what, still, v, now, wantStill)
		}
	}
	check("nothing", true)
	clock = clock.Add(time.Second)
	if err := feedtest.Save(ctx, db, 2, "zz.example", feedtest.Card{Key: "https://zz.example/card.json",
		Name: "com.example/zz", Version: "1", Remotes: []string{"https://mcp.zz.example/m"}}); err != nil {
		t.Fatal(err)
	}
	check("a server after the span", true)
	if err := db.AddProbeDecision(ctx, store.ProbeDecision{RunID: 2, RemoteNorm: "https://mcp.d000003.example/b",
		URL: "https://mcp.d000003.example/b", Decision: "skip", Reason: "budget"}); err != nil {
		t.Fatal(err)
	}
	check("a probe decision inside the span", false)

	end, err := db.FeedEntryPage(ctx, store.EntryQuery{Limit: 100, After: "https://d000006.example/card-a.json"})
	if err != nil {
		t.Fatal(err)
	}
	if !end.Range.ToEnd || end.More {
		t.Errorf("the last page's range %+v, more %v; want one to the end", end.Range, end.More)
	}
	defer func(n int) { *store.MaxSpanRecords = n }(*store.MaxSpanRecords)
	*store.MaxSpanRecords = 3 // the span holds 4
	if wide, err := db.FeedEntryPage(ctx, q); err != nil || wide.Keep {
		t.Errorf("a span wider than the most a kept page may have: kept %v (%v)", wide.Keep, err)
	}
	if _, err := db.FeedEntryPage(ctx, store.EntryQuery{Limit: 3, Since: "2000-01-01T00:00:00Z"}); err == nil {
		t.Error("a page selected by time was read by its span")
	}
}
