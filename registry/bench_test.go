package registry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
	"github.com/cardcrawl/cardcrawl/store"
)

func loadN(b *testing.B, e *env, n int) {
	b.Helper()
	t := e.clock.Now().Add(-24 * time.Hour)
	for i := range n {
		if err := e.double.Load(genServer(i, "1.0.0"), registrytest.Official{Status: "active", StatusChangedAt: t, PublishedAt: t, UpdatedAt: t, IsLatest: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync20000 is a full sweep of 20,000 versions from the local
// double into a fresh SQLite file, rate cap off.
func BenchmarkSync20000(b *testing.B) {
	const n = 20000
	e := newEnv(b)
	loadN(b, e, n)
	c := e.client(b, nil)
	val := validator(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), store.Options{Now: e.clock.Now})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := registry.Sync(context.Background(), registry.SyncOptions{Client: c, Store: db, Validator: val, Now: e.clock.Now})
		if err != nil || res.Entries != n {
			b.Fatalf("sync = %+v, %v", res, err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkResyncNoChange is an incremental sync when nothing changed:
// one request answered with an empty page.
func BenchmarkResyncNoChange(b *testing.B) {
	e := newEnv(b)
	loadN(b, e, 20000)
	c := e.client(b, nil)
	val := validator(b)
	if _, err := registry.Sync(context.Background(), registry.SyncOptions{Client: c, Store: e.db, Validator: val, Now: e.clock.Now}); err != nil {
		b.Fatal(err)
	}
	before := len(e.double.Requests())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := registry.Sync(context.Background(), registry.SyncOptions{Client: c, Store: e.db, Validator: val, Now: e.clock.Now})
		if err != nil || res.Kind != "delta" || res.Entries != 0 {
			b.Fatalf("resync = %+v, %v", res, err)
		}
	}
	b.StopTimer()
	if got := len(e.double.Requests()) - before; got != b.N {
		b.Fatalf("%d requests for %d resyncs", got, b.N)
	}
}
