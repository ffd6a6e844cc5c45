package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
	"github.com/cardcrawl/cardcrawl/store"
)

// clock is a manual test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sleeper records the waits the client asks for instead of sleeping.
// It advances the clock by each wait, as time would have passed.
type sleeper struct {
	mu    sync.Mutex
	clock *clock
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	if s.clock != nil {
		s.clock.Advance(d)
	}
	return ctx.Err()
}

func (s *sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

type env struct {
	clock   *clock
	double  *registrytest.Double
	srv     *httptest.Server
	db      *store.DB
	sleeper *sleeper
}

func newEnv(t testing.TB) *env {
	t.Helper()
	c := newClock()
	d := registrytest.New(c.Now)
	srv := httptest.NewTLSServer(d)
	t.Cleanup(srv.Close)
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), store.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &env{clock: c, double: d, srv: srv, db: db, sleeper: &sleeper{clock: c}}
}

func (e *env) client(t testing.TB, mod func(*registry.ClientOptions)) *registry.Client {
	t.Helper()
	opts := registry.ClientOptions{
		BaseURL:           e.srv.URL,
		HTTPClient:        e.srv.Client(),
		RequestsPerSecond: -1,
		MaxRetries:        2,
		Sleep:             e.sleeper.Sleep,
		Now:               e.clock.Now,
	}
	if mod != nil {
		mod(&opts)
	}
	c, err := registry.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) sync(t testing.TB, c *registry.Client, mod func(*registry.SyncOptions)) (registry.SyncResult, error) {
	t.Helper()
	opts := registry.SyncOptions{Client: c, Store: e.db, Validator: validator(t), Now: e.clock.Now}
	if mod != nil {
		mod(&opts)
	}
	return registry.Sync(context.Background(), opts)
}

var (
	validatorOnce sync.Once
	sharedVal     *registry.Validator
	validatorErr  error
)

// validator compiles the schemas once per test binary; compiling them per
// test would dominate the run time.
func validator(t testing.TB) *registry.Validator {
	t.Helper()
	validatorOnce.Do(func() { sharedVal, validatorErr = registry.NewValidator() })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	return sharedVal
}

// genServer is a valid, current server.json with one remote.
func genServer(i int, version string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example.s%05d/server","description":"Server number %d","version":%q,"remotes":[{"type":"streamable-http","url":"https://s%05d.example.com/mcp"}]}`, i, i, version, i))
}

func (e *env) publishN(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		if err := e.double.Publish(genServer(i, "1.0.0"), true); err != nil {
			t.Fatal(err)
		}
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seedServers(t testing.TB) []json.RawMessage {
	t.Helper()
	var s []json.RawMessage
	if err := json.Unmarshal(readFixture(t, "seed.current.json"), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

type row struct {
	Name, Version, Status string
	Latest, Reported      bool
}

func rows(t testing.TB, db *store.DB) []row {
	t.Helper()
	es, err := db.RegistryEntries(context.Background(), store.RegistryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := []row{}
	for _, e := range es {
		out = append(out, row{e.Name, e.Version, e.Status, e.IsLatest, e.ReportedLatest})
	}
	return out
}
