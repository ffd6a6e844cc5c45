package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestServersAndExportFilters: --grade and --outcome (with --category)
// narrow servers and export to the records the store's filter keeps.
func TestServersAndExportFilters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 23, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	want := func(f store.FeedFilter) []string {
		out := []string{}
		if err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: f}, func(s *store.FeedServer) error {
			out = append(out, s.Endpoint+" "+s.CardURL)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := len(want(store.FeedFilter{}))
	tests := []struct {
		flags  []string
		filter store.FeedFilter
	}{
		{[]string{"--grade", "non_conformant"}, store.FeedFilter{Grade: "non_conformant"}},
		{[]string{"--outcome", "ok"}, store.FeedFilter{Outcome: "ok"}},
		{[]string{"--outcome", "none"}, store.FeedFilter{NotProbed: true}},
		{[]string{"--grade", "conformant", "--outcome", "timeout"}, store.FeedFilter{Grade: "conformant", Outcome: "timeout"}},
		{[]string{"--category", "none", "--outcome", "ok"}, store.FeedFilter{NoCategory: true, Outcome: "ok"}},
	}
	wants := make([][]string, len(tests))
	for i, tt := range tests {
		wants[i] = want(tt.filter)
	}
	db.Close()
	for i, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			w := wants[i]
			if len(w) == 0 || len(w) == all {
				t.Fatalf("the fixture does not exercise %v: %d of %d", tt.flags, len(w), all)
			}
			code, stdout, stderr := run(t, "", append([]string{"servers", "--json", "--db", path}, tt.flags...)...)
			if code != 0 {
				t.Fatalf("servers: exit %d: %s", code, stderr)
			}
			var recs []struct{ Endpoint, CardURL string }
			if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, r := range recs {
				got = append(got, r.Endpoint+" "+r.CardURL)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if strings.Contains(strings.Join(tt.flags, " "), "--category") {
				return // export has no --category
			}
			code, stdout, stderr = run(t, "", append([]string{"export", "--format", "jsonl", "--db", path}, tt.flags...)...)
			if code != 0 {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			got = []string{}
			for line := range strings.Lines(stdout) {
				var r struct{ Endpoint, CardURL string }
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, r.Endpoint+" "+r.CardURL)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("export (-want +got):\n%s", diff)
			}
		})
	}
}
