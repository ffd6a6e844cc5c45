package store_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

func TestWriteRegistryUpsertAndElect(t *testing.T) { eachDialect(t, testWriteRegistryUpsertAndElect) }

func testWriteRegistryUpsertAndElect(t *testing.T, dsn string) {
	ctx := context.Background()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	db, err := store.Open(ctx, dsn, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The election here is "highest version string wins", enough to see
	// that every stored version of a touched name takes part.
	pick := func(vs []store.RegistryVersion) string {
		best := ""
		for _, v := range vs {
			if v.Version > best {
				best = v.Version
			}
		}
		return best
	}
	const src = "https://registry.example"
	write := func(es ...store.RegistryEntry) {
		t.Helper()
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: src, Entries: es, PickLatest: pick}); err != nil {
			t.Fatal(err)
		}
	}
	write(store.RegistryEntry{Name: "com.example/a", Version: "1", Status: "active", ReportedLatest: true, ServerJSON: `{"v":1}`})
	now = now.Add(time.Hour)
	// Same content again: last_seen moves, changed_at does not.
	write(store.RegistryEntry{Name: "com.example/a", Version: "1", Status: "active", ReportedLatest: true, ServerJSON: `{"v":1}`})
	now = now.Add(time.Hour)
	// A newer version arrives alone; the stored one must lose latest.
	write(store.RegistryEntry{Name: "com.example/a", Version: "2", Status: "active", ReportedLatest: true, ServerJSON: `{"v":2}`})
	es, err := db.RegistryEntries(ctx, store.RegistryFilter{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Version, FirstSeen, LastSeen, ChangedAt string
		Latest, Reported                        bool
	}
	var got []row
	for _, e := range es {
		got = append(got, row{e.Version, e.FirstSeen, e.LastSeen, e.ChangedAt, e.IsLatest, e.ReportedLatest})
	}
	want := []row{
		{"1", "2026-07-01T00:00:00.000000000Z", "2026-07-01T01:00:00.000000000Z", "2026-07-01T00:00:00.000000000Z", false, true},
		{"2", "2026-07-01T02:00:00.000000000Z", "2026-07-01T02:00:00.000000000Z", "2026-07-01T02:00:00.000000000Z", true, true},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	latest, err := db.RegistryEntries(ctx, store.RegistryFilter{LatestOnly: true})
	if err != nil || len(latest) != 1 || latest[0].Version != "2" {
		t.Errorf("latest = %+v, %v", latest, err)
	}
}

func TestRegistrySyncStateRoundTrip(t *testing.T) { eachDialect(t, testRegistrySyncStateRoundTrip) }

func testRegistrySyncStateRoundTrip(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	empty, err := db.RegistrySyncState(ctx, "https://registry.example")
	if err != nil || empty != (store.RegistrySyncState{Source: "https://registry.example"}) {
		t.Errorf("unsynced state = %+v, %v", empty, err)
	}
	want := store.RegistrySyncState{Source: "https://registry.example", Watermark: "w", SweepKind: "delta", SweepSince: "s",
		SweepStartedAt: "t", Cursor: "a/b:1", Pages: 3, Entries: 250, LastFullAt: "f", LastDoneAt: "d", LastError: "e"}
	if err := db.SaveRegistrySyncState(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := db.RegistrySyncState(ctx, want.Source)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

// EachRegistryEntry reads the entries a filter selects once each, in key
// order, across pages; CountRegistrySources counts their registries.
func TestEachRegistryEntryPages(t *testing.T) { eachDialect(t, testEachRegistryEntryPages) }

func testEachRegistryEntryPages(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	type key struct{ Source, Name, Version string }
	var all []key
	for _, src := range []string{"https://b.registry.example", "https://a.registry.example"} {
		var es []store.RegistryEntry
		for i := range 230 {
			name := fmt.Sprintf("com.example/s%03d", i%115)
			version := fmt.Sprintf("1.0.%d", i/115)
			es = append(es, store.RegistryEntry{Name: name, Version: version, Status: "active", ReportedLatest: i/115 == 1,
				ServerJSON: `{}`})
			all = append(all, key{src, name, version})
		}
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: src, Entries: es}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(all, func(a, b key) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Name, b.Name), strings.Compare(a.Version, b.Version))
	})
	for _, tc := range []struct {
		f       store.RegistryFilter
		keep    func(key) bool
		sources int
	}{
		{store.RegistryFilter{}, func(key) bool { return true }, 2},
		{store.RegistryFilter{Source: "https://b.registry.example"}, func(k key) bool { return k.Source == "https://b.registry.example" }, 1},
		{store.RegistryFilter{Name: "com.example/s007"}, func(k key) bool { return k.Name == "com.example/s007" }, 2},
		{store.RegistryFilter{LatestOnly: true}, func(k key) bool { return k.Version == "1.0.1" }, 2},
		{store.RegistryFilter{Name: "com.example/none"}, func(key) bool { return false }, 0},
	} {
		var want, got []key
		for _, k := range all {
			if tc.keep(k) {
				want = append(want, k)
			}
		}
		err := db.EachRegistryEntry(ctx, tc.f, func(e store.RegistryEntry) error {
			got = append(got, key{e.Source, e.Name, e.Version})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.f, diff)
		}
		if n, err := db.CountRegistrySources(ctx, tc.f); err != nil || n != tc.sources {
			t.Errorf("%+v: %d registries, %v; want %d", tc.f, n, err, tc.sources)
		}
	}
}
