package registry_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/pgtest"
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

// loadRealistic loads n copies of the first seed entry (a real, 1.6 KB
// server.json with packages, icons and environment variables), each under
// its own name.
func loadRealistic(b *testing.B, e *env, n int) {
	b.Helper()
	var seed bytes.Buffer
	if err := json.Compact(&seed, seedServers(b)[0]); err != nil {
		b.Fatal(err)
	}
	const name = `"name":"io.github.domdomegg/airtable-mcp-server"`
	if !bytes.Contains(seed.Bytes(), []byte(name)) {
		b.Fatalf("seed entry lacks %s", name)
	}
	t := e.clock.Now().Add(-24 * time.Hour)
	for i := range n {
		s := bytes.Replace(seed.Bytes(), []byte(name), fmt.Appendf(nil, `"name":"io.github.domdomegg/airtable-mcp-server-%05d"`, i), 1)
		if err := e.double.Load(s, registrytest.Official{Status: "active", StatusChangedAt: t, PublishedAt: t, UpdatedAt: t, IsLatest: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// fetchClient is the program's guarded client reaching the double as
// registry.example.com through ConnectTo, as 'registry sync --connect-to'
// does: TLS, the guard and its per-host slot all take part.
func fetchClient(b testing.TB, e *env, userAgent string) *registry.Client {
	b.Helper()
	u, err := url.Parse(e.srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(e.srv.Certificate())
	fc, err := fetch.New(fetch.Options{ConnectTo: []fetch.ConnectTo{{FromHost: "registry.example.com", ToHost: u.Hostname(), ToPort: u.Port()}},
		RootCAs: pool, UserAgent: userAgent})
	if err != nil {
		b.Fatal(err)
	}
	c, err := registry.NewClient(registry.ClientOptions{BaseURL: "https://registry.example.com", HTTPClient: fc.HTTPClient(),
		RequestsPerSecond: -1, Sleep: e.sleeper.Sleep, Now: e.clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSync20000 is a full sweep of 20,000 realistic versions (the
// seed entry's shape, 1.6 KB each) from the local double, through the
// program's fetch client over TLS, into a fresh SQLite file, rate cap off.
func BenchmarkSync20000(b *testing.B) {
	benchSync(b, func(b testing.TB) string { return filepath.Join(b.TempDir(), "bench.db") })
}

// BenchmarkSync20000Postgres is BenchmarkSync20000 into a fresh PostgreSQL
// database (internal/pgtest's throwaway cluster).
func BenchmarkSync20000Postgres(b *testing.B) { benchSync(b, pgtest.NewDB) }

func benchSync(b *testing.B, newDB func(testing.TB) string) {
	const n = 20000
	e := newEnv(b)
	loadRealistic(b, e, n)
	c := fetchClient(b, e, "")
	val := validator(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := store.Open(context.Background(), newDB(b), store.Options{Now: e.clock.Now})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := registry.Sync(context.Background(), registry.SyncOptions{Client: c, Store: db, Validator: val, Now: e.clock.Now})
		if err != nil || res.Entries != n || res.Invalid != 0 {
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
