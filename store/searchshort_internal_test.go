package store

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShortCandidatesBoundServers: a term of one or two characters finds
// the rows holding it in any case, and the bound on its candidates counts
// those rows, not its occurrences: one row holding the term many times
// neither hides the others nor makes the term common.
func TestShortCandidatesBoundServers(t *testing.T) {
	ctx := context.Background()
	db := openBatchTest(t)
	ix, err := db.OpenSearchIndex(ctx, SearchIndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	rows := []searchRow{
		{kind: KindEndpoint, subject: "a", text: joinSearchText([]string{"λόγος λόγος λόγος λόγος λόγος λόγος"})},
		{kind: KindEndpoint, subject: "b", text: joinSearchText([]string{"ΛΌΓΟΣ!"})},
		{kind: KindEndpoint, subject: "c", text: joinSearchText([]string{"nothing here"})},
		{kind: KindCard, subject: "d", text: joinSearchText([]string{"x", "Go"})},
		{kind: KindCard, subject: "e", text: joinSearchText([]string{"one more"})},
	}
	if err := ix.write(ctx, searchFromFeed, 0, rows); err != nil {
		t.Fatal(err)
	}
	ix.maxCands.Store(2)
	for _, c := range []struct {
		q      string
		want   []SiteKey
		common bool
	}{
		{q: "ος", want: []SiteKey{{Kind: KindEndpoint, Subject: "a"}, {Kind: KindEndpoint, Subject: "b"}}},
		{q: "Σ", want: []SiteKey{{Kind: KindEndpoint, Subject: "a"}, {Kind: KindEndpoint, Subject: "b"}}},
		{q: "gO", want: []SiteKey{{Kind: KindCard, Subject: "d"}}},
		{q: "x", want: []SiteKey{{Kind: KindCard, Subject: "d"}}},
		{q: "O", common: true}, // c, d and e: more than the bound
		{q: "zq"},
	} {
		got, common, err := ix.candidates(ctx, c.q, SiteKey{})
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		if common != c.common {
			t.Errorf("%q: common %v, want %v", c.q, common, c.common)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q: candidates (-want +got):\n%s", c.q, diff)
		}
	}
}
