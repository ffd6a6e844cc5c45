package discover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
)

// registryWeb: a card lists the go-sdk server; the Registry (a double on the
// simulated web) declares it too, plus an mcp-go server only it knows, a
// templated remote, and a deprecated entry whose remote must not be probed.
var registryWeb = []byte(`
-- a.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"a","type":"application/mcp-server-card+json","url":"https://cards.example.org/weather"}]}
-- cards.example.org/weather --
{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/weather","version":"1.0.0","description":"Weather","remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp"}]}
-- mcp.weather.example/mcp --
SIMWEB-MCP go-sdk-stateful name=weather-live version=1.0.1 tools=3
-- mcp.maps.example/mcp --
SIMWEB-MCP mcp-go-streamable name=maps-live version=2.0.0 tools=2
-- mcp.old.example/mcp --
SIMWEB-MCP go-sdk-stateful name=old version=0.1.0 tools=1
`)

// registrySync serves a Registry double holding servers (prepare may
// change them further) as registry.example and syncs it into the store.
func registrySync(t *testing.T, w *world, prepare func(*registrytest.Double), servers ...string) {
	t.Helper()
	d := registrytest.New(nil)
	for _, s := range servers {
		if err := d.Publish(json.RawMessage(s), true); err != nil {
			t.Fatal(err)
		}
	}
	if prepare != nil {
		prepare(d)
	}
	w.web.Handle("registry.example", d)
	client, err := registry.NewClient(registry.ClientOptions{BaseURL: "https://registry.example", HTTPClient: w.fetch.HTTPClient(), RequestsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := registry.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Sync(context.Background(), registry.SyncOptions{Client: client, Store: w.store, Validator: v}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) declarers(runID int64) map[string]string {
	return w.decisionsAs(runID, `decision || ':' || reason || ' by ' || declared_by`)
}

func TestProbeRegistryRemotes(t *testing.T) {
	w := newWorld(t, registryWeb)
	deprecate := func(d *registrytest.Double) { d.SetStatus("com.example/old", "0.1.0", "deprecated", "replaced") }
	registrySync(t, w, deprecate,
		`{"name":"com.example/weather","description":"Weather","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp/"}]}`,
		`{"name":"com.example/maps","description":"Maps","version":"2.0.0","remotes":[{"type":"streamable-http","url":"https://mcp.maps.example/mcp"},{"type":"streamable-http","url":"https://{region}.maps.example/mcp"}]}`,
		`{"name":"com.example/old","description":"Old","version":"0.1.0","remotes":[{"type":"streamable-http","url":"https://mcp.old.example/mcp"}]}`,
	)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	opts := w.options()
	opts.Now = clock
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: w.fetch, Now: clock})}
	opts.ProbeRegistry = true

	// The crawl decides the card's endpoint first; the Registry's
	// declaration of the same endpoint is not decided or probed again.
	sum := w.crawl(context.Background(), opts, "a.example")
	if diff := cmp.Diff(map[string]int{"ok": 2}, sum.Probes); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"https://mcp.weather.example/mcp":   "probe:warranted by card:https://cards.example.org/weather",
		"https://mcp.maps.example/mcp":      "probe:warranted by registry:com.example/maps@2.0.0",
		"https://{region}.maps.example/mcp": "skip:placeholder by registry:com.example/maps@2.0.0",
	}
	if diff := cmp.Diff(want, w.declarers(sum.RunID)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if n := len(w.web.Requests("mcp.old.example")); n != 0 {
		t.Errorf("%d requests to a deprecated entry's remote", n)
	}
	rows, err := w.store.Probes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, r := range rows {
		names[r.RemoteNorm] = r.ServerName
	}
	if diff := cmp.Diff(map[string]string{"https://mcp.weather.example/mcp": "weather-live", "https://mcp.maps.example/mcp": "maps-live"}, names); diff != "" {
		t.Errorf("probed servers (-want +got):\n%s", diff)
	}

	// probe --registry alone, within the max age: both are fresh, whoever
	// declared them when they were probed.
	sum, err = discover.ProbeRegistry(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Probes) != 0 || sum.ProbeSkips["fresh"] != 2 {
		t.Errorf("second run probes %v skips %v, want two fresh", sum.Probes, sum.ProbeSkips)
	}

	// A day later they are due again.
	now = now.Add(25 * time.Hour)
	sum, err = discover.ProbeRegistry(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"ok": 2}, sum.Probes); diff != "" {
		t.Errorf("a day later, probes (-want +got):\n%s", diff)
	}
}

// An entry declaring more remotes than a card may keep has as many
// recorded as a card would.
func TestRegistryRemotesBounded(t *testing.T) {
	w := newWorld(t)
	var remotes []string
	for i := range 40 {
		remotes = append(remotes, fmt.Sprintf(`{"type":"streamable-http","url":"https://r%02d.many.example/mcp"}`, i))
	}
	registrySync(t, w, nil, `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",`+
		`"name":"com.example/many","description":"d","version":"1.0.0","remotes":[`+strings.Join(remotes, ",")+`]}`)
	if err := discover.RefreshRegistryRemotes(context.Background(), w.store); err != nil {
		t.Fatal(err)
	}
	got := w.pairs(`SELECT url_norm, name FROM registry_remotes`)
	if len(got) != 32 || got["https://r31.many.example/mcp"] == "" || got["https://r32.many.example/mcp"] != "" {
		t.Errorf("%d remotes recorded, want the first 32: %v", len(got), got)
	}
}
