package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestProbeHistoryInBrief: what the readers take from an endpoint's brief
// history (probe_outcomes) is what its probes say: per outcome the count
// and the earliest and latest times, whatever order the probes were made
// in, and as its latest probe (and latest ok probe) the one written last.
func TestProbeHistoryInBrief(t *testing.T) { eachDialect(t, testProbeHistoryInBrief) }

func testProbeHistoryInBrief(t *testing.T, dsn string) {
	db := open(t, dsn, func() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) })
	ctx := context.Background()
	const one, other = "https://mcp.a.example/one", "https://mcp.b.example/other"
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDomain(ctx, result("a.example", one)); err != nil {
		t.Fatal(err)
	}
	// Times out of order, so first and last are not the first and last
	// written; the last written is an old timeout, after the last ok. The
	// times are as the store keeps them (ts), so text order is time order.
	probes := []struct{ norm, at, outcome string }{
		{one, "2026-10-05T00:00:00.000000000Z", "ok"},
		{one, "2026-10-01T00:00:00.000000000Z", "timeout"},
		{other, "2026-09-01T00:00:00.000000000Z", "ok"},
		{one, "2026-10-09T00:00:00.000000000Z", "http_error"},
		{one, "2026-10-03T00:00:00.000000000Z", "ok"},
		{one, "2026-10-08T00:00:00.000000000Z", "timeout"},
		{one, "2026-10-07T00:00:00.000000000Z", "ok"},
		{one, "2026-10-02T00:00:00.000000000Z", "ok"},
		{other, "2026-09-02T00:00:00.000000000Z", "timeout"},
		{one, "2026-09-30T00:00:00.000000000Z", "timeout"},
	}
	want := map[string][]store.ProbeCount{}
	lastOK := map[string]string{}
	for i, p := range probes {
		r := fmt.Sprintf(`{"n":%d}`, i)
		if err := db.AddProbe(ctx, 0, store.ProbeRow{RemoteNorm: p.norm, URL: p.norm, ProbedAt: p.at, Outcome: p.outcome,
			Result: r}); err != nil {
			t.Fatal(err)
		}
		if p.outcome == "ok" {
			lastOK[p.norm] = r
		}
		h := want[p.norm]
		j := slices.IndexFunc(h, func(c store.ProbeCount) bool { return c.Outcome == p.outcome })
		if j < 0 {
			want[p.norm] = append(h, store.ProbeCount{Outcome: p.outcome, Count: 1, First: p.at, Last: p.at})
			continue
		}
		h[j].Count++
		h[j].First, h[j].Last = min(h[j].First, p.at), max(h[j].Last, p.at)
	}
	for _, h := range want {
		slices.SortFunc(h, func(a, b store.ProbeCount) int { return strings.Compare(a.Outcome, b.Outcome) })
	}

	got := map[string][]store.ProbeCount{}
	latest := map[string]string{}
	if err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all"}}, func(s *store.FeedServer) error {
		got[s.Cursor().Key] = s.ProbeHistory
		if s.Probe != nil {
			latest[s.Cursor().Key] = s.Probe.Outcome
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]store.ProbeCount{one: want[one]}, got); diff != "" {
		t.Errorf("probe history of the feed's records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{one: "timeout"}, latest); diff != "" {
		t.Errorf("latest probe of the feed's records (-want +got):\n%s", diff)
	}

	counts, err := db.ProbeOutcomeCounts(ctx, store.SourceAll)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.OutcomeCount{{Outcome: "timeout", Count: 2}}, counts); diff != "" {
		t.Errorf("endpoints by latest outcome (-want +got):\n%s", diff)
	}
	var latestRows []string
	if err := db.ProbesFrom(ctx, store.SourceAll, func(p store.ProbeRow) error {
		latestRows = append(latestRows, p.RemoteNorm+" "+p.Result)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{one + ` {"n":9}`, other + ` {"n":8}`}, latestRows); diff != "" {
		t.Errorf("latest probes (-want +got):\n%s", diff)
	}
	gotOK := map[string]string{}
	if err := db.EachLatestOKProbe(ctx, func(p store.ProbeTools) error {
		gotOK[p.RemoteNorm] = p.Result
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lastOK, gotOK); diff != "" {
		t.Errorf("latest ok probes (-want +got):\n%s", diff)
	}
}
