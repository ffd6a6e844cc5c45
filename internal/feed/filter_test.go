package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		grade, outcome, source, category string
		want                             store.FeedFilter
		err                              string
	}{
		{"", "", "", "", store.FeedFilter{}, ""},
		{"conformant", "", "", "", store.FeedFilter{Grade: "conformant"}, ""},
		{"near_conformant", "ok", "", "", store.FeedFilter{Grade: "near_conformant", Outcome: "ok"}, ""},
		{"", "requires_login", "", "", store.FeedFilter{Outcome: "requires_login"}, ""},
		{"non_conformant", "none", "", "", store.FeedFilter{Grade: "non_conformant", NotProbed: true}, ""},
		{"", "", "card", "", store.FeedFilter{Source: "card"}, ""},
		{"", "ok", "all", "", store.FeedFilter{Outcome: "ok", Source: "all"}, ""},
		{"", "", "registry", "", store.FeedFilter{Source: "registry"}, ""},
		{"Conformant", "", "", "", store.FeedFilter{}, `grade must be one of conformant, near_conformant, non_conformant, not "Conformant"`},
		{"", "OK", "", "", store.FeedFilter{}, `outcome must be one of blocked, canceled, connect, handshake_rejected, http_4xx, http_5xx, not_mcp, ok, rate_limited, requires_login, timeout or none, not "OK"`},
		{"", "dns", "", "", store.FeedFilter{}, `outcome must be one of`}, // a failure class is no outcome
		{"", "", "cards", "", store.FeedFilter{}, `source must be one of card, registry, all, not "cards"`},
		{"", "", "", "travel", store.FeedFilter{Category: "travel"}, ""},
		{"", "", "", "none", store.FeedFilter{NoCategory: true}, ""},
		{"", "", "", "Travel", store.FeedFilter{}, `category must be one of travel, food_delivery, real_estate, health, maps_transport, finance, shopping, media or none, not "Travel"`},
	}
	for _, tt := range tests {
		got, err := feed.ParseFilter(feed.FilterParams{Grade: tt.grade, Outcome: tt.outcome, Source: tt.source, Category: tt.category})
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%+v: error %v, want %q", tt, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tt, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt, diff)
		}
	}
}

// filterCases are filters the filled store's records split on.
var filterCases = []struct {
	query  string // as serve's query parameters
	filter store.FeedFilter
}{
	{"grade=near_conformant", store.FeedFilter{Grade: "near_conformant"}},
	{"outcome=timeout", store.FeedFilter{Outcome: "timeout"}},
	{"outcome=none", store.FeedFilter{NotProbed: true}},
	{"grade=conformant&outcome=ok", store.FeedFilter{Grade: "conformant", Outcome: "ok"}},
	{"category=travel", store.FeedFilter{Category: "travel"}},
	{"category=none", store.FeedFilter{NoCategory: true}},
}

// split returns the endpoints of the records the filter keeps and of
// those it does not, and the same for the cards that describe them (a card
// is kept when one of its records is), as the store reads them.
func split(t *testing.T, db *store.DB, f store.FeedFilter) (kept, left, keptCards, leftCards []string) {
	t.Helper()
	in, cardIn := map[string]bool{}, map[string]bool{}
	walk := func(f store.FeedFilter, fn func(*store.FeedServer)) {
		if err := db.EachFeedServer(context.Background(), store.FeedQuery{FeedFilter: f}, func(s *store.FeedServer) error {
			if s.Endpoint != "" {
				fn(s)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	walk(f, func(s *store.FeedServer) {
		in[s.Endpoint] = true
		kept = append(kept, s.Endpoint)
		if !cardIn[s.CardKey] {
			cardIn[s.CardKey] = true
			keptCards = append(keptCards, s.CardKey)
		}
	})
	walk(store.FeedFilter{}, func(s *store.FeedServer) {
		if !in[s.Endpoint] {
			left = append(left, s.Endpoint)
		}
		if !cardIn[s.CardKey] {
			cardIn[s.CardKey] = true
			leftCards = append(leftCards, s.CardKey)
		}
	})
	if len(kept) == 0 || len(left) == 0 || len(keptCards) == 0 || len(leftCards) == 0 {
		t.Fatalf("the fixture does not exercise %+v: %d/%d kept, %d/%d left", f, len(kept), len(keptCards), len(left), len(leftCards))
	}
	return kept, left, keptCards, leftCards
}

// TestExportFilters: every format writes the endpoints the filter keeps
// and none of the others; the AI Catalog, an entry per card that lists
// the card's own remotes, the cards of those records and none of the
// others.
func TestExportFilters(t *testing.T) {
	db, _ := filledStore(t, 23)
	for _, tc := range filterCases {
		kept, left, keptCards, leftCards := split(t, db, tc.filter)
		for _, f := range feed.Formats {
			kept, left := kept, left
			if f.Name == "ai-catalog" {
				kept, left = keptCards, leftCards
			}
			var buf bytes.Buffer
			if err := f.Write(context.Background(), &buf, db, feed.WriteOptions{Filter: tc.filter,
				Catalog: feed.CatalogOptions{PublisherDomain: "directory.example"}}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			// An endpoint ends at a quote (JSON) or a comma (CSV).
			has := func(ep string) bool { return strings.Contains(out, ep+`"`) || strings.Contains(out, ep+",") }
			for _, ep := range kept {
				if !has(ep) {
					t.Errorf("%s %s: %s left out", f.Name, tc.query, ep)
				}
			}
			for _, ep := range left {
				if has(ep) {
					t.Errorf("%s %s: %s written", f.Name, tc.query, ep)
				}
			}
		}
	}
}

// TestListFilters: /v0.1/servers keeps the entries with a record the
// filter keeps, and of each only those records; a bad value is a 400
// problem whose detail is one line naming the values allowed.
func TestListFilters(t *testing.T) {
	db, _ := filledStore(t, 23)
	c := newServer(t, db)
	for _, tc := range filterCases {
		kept, _, _, _ := split(t, db, tc.filter)
		code, _, body := c.get("/v0.1/servers?limit=100&" + tc.query)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.query, code, body)
		}
		var page struct {
			Servers []struct {
				Server struct{ Remotes []struct{ URL string } }
			}
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range page.Servers {
			for _, r := range s.Server.Remotes {
				got = append(got, r.URL)
			}
		}
		slices.Sort(got)
		slices.Sort(kept)
		if diff := cmp.Diff(kept, got); diff != "" {
			t.Errorf("%s: remotes (-want +got):\n%s", tc.query, diff)
		}
	}
	for _, q := range []string{"grade=good", "outcome=dns", "grade=conformant&outcome=Timeout"} {
		code, h, body := c.get("/v0.1/servers?" + q)
		var p struct{ Detail string }
		err := json.Unmarshal([]byte(body), &p)
		if code != http.StatusBadRequest || h.Get("Content-Type") != "application/problem+json" || err != nil ||
			strings.Contains(p.Detail, "\n") || !strings.Contains(p.Detail, "must be one of") {
			t.Errorf("%s: %d %s %q, want a one-line 400 problem", q, code, h.Get("Content-Type"), body)
		}
	}
}
