package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	if diff := cmp.Diff(want, got); diff != "" {
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
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}
