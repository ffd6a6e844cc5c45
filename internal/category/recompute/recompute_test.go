package recompute_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/category/recompute"
	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

const at = "2026-11-30T00:00:00Z"

type fixture struct {
	t  *testing.T
	db *store.DB
}

func (f fixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db.SQL().Exec(q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// endpoint lists an endpoint, on a domain of its own, whose card has the
// given name and description, and, when tools is not nil, an ok probe that
// listed those tools. It is saved as a crawl saves it, so the feed record
// the category pass reads is written with it.
func (f fixture) endpoint(norm, name, desc string, tools []string) {
	f.t.Helper()
	ctx := context.Background()
	domain := strings.NewReplacer("https://", "", "/", "-").Replace(norm)
	if _, err := f.db.Enqueue(ctx, []string{domain}, store.EnqueueOptions{}); err != nil {
		f.t.Fatal(err)
	}
	key := "https://cards.example/" + norm
	r := store.DomainResult{Domain: domain, Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: "https://" + domain + "/.well-known/ai-catalog.json",
		Cards: []store.CardRecord{{Key: key, SHA256: "h-" + norm, Name: name, Description: desc, Grade: "conformant",
			JSON: []byte(`{}`)}},
		Remotes: []store.RemoteRecord{{URLNorm: norm, URL: norm, Type: "streamable-http", CardKey: key, JSON: []byte(`{}`)}}}
	r.Listings = []store.ListingRecord{{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: key, RemoteNorm: norm}}
	if err := f.db.SaveDomain(ctx, r); err != nil {
		f.t.Fatal(err)
	}
	if tools != nil {
		rec, _ := json.Marshal(map[string]any{"outcome": "ok", "toolNames": tools, "toolCount": len(tools)})
		f.probe(norm, string(rec))
	}
}

// probe records an ok probe of the endpoint, as a crawl does.
func (f fixture) probe(norm, record string) {
	f.t.Helper()
	if err := f.db.AddProbe(context.Background(), 0, store.ProbeRow{RemoteNorm: norm, URL: norm, ProbedAt: at,
		Outcome: "ok", Result: record}); err != nil {
		f.t.Fatal(err)
	}
}

// unlist saves the endpoint's domain again, without a catalog.
func (f fixture) unlist(norm string) {
	f.t.Helper()
	domain := strings.NewReplacer("https://", "", "/", "-").Replace(norm)
	if err := f.db.SaveDomain(context.Background(), store.DomainResult{Domain: domain, Outcome: store.OutcomeNoCatalog,
		Definitive: true}); err != nil {
		f.t.Fatal(err)
	}
}

func (f fixture) categories() map[string]string {
	f.t.Helper()
	rows, err := f.db.SQL().Query(`SELECT kind, subject, category, source, reason FROM server_categories`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var kind, subject, cat, src, reason string
		if err := rows.Scan(&kind, &subject, &cat, &src, &reason); err != nil {
			f.t.Fatal(err)
		}
		out[kind+" "+subject] = cat + "/" + src + reason
	}
	return out
}

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestRun(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testRun(t, filepath.Join(t.TempDir(), "c.db")) })
	t.Run("postgres", func(t *testing.T) { testRun(t, pgtest.NewDB(t)) })
}

func testRun(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := fixture{t, db}
	travelTools := []string{"search_flights", "book_hotel", "list_airports"}
	f.endpoint("https://a.example/mcp", "com.example/flight-finder", "", nil)
	f.endpoint("https://b.example/mcp", "com.example/acme", "Recipes for dinner.", nil)
	f.endpoint("https://c.example/mcp", "com.example/acme", "", travelTools)
	// A gateway's tool set listed identically by 20 servers says nothing.
	gateway := []string{"call_tool", "search_flights", "book_hotel", "list_airports"}
	for i := range 20 {
		f.endpoint(fmt.Sprintf("https://gw%02d.example/mcp", i), "com.example/gateway", "", gateway)
	}
	f.exec(`INSERT INTO registry_entries (source, name, version, status, is_latest, server_json, first_seen, last_seen, changed_at)
		VALUES ('https://registry.example', 'io.github.x/acme', '1.0.0', 'active', TRUE,
		'{"name":"io.github.x/acme","description":"Stock quotes"}', ?, ?, ?)`, at, at, at)

	res, err := recompute.Run(ctx, db, recompute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Servers != 24 || res.Changed != 24 || res.CommonSets != 1 || res.ToolSets != 21 {
		t.Errorf("first run = %+v", res)
	}
	got := f.categories()
	want := map[string]string{
		"endpoint https://a.example/mcp": "travel/name",
		"endpoint https://b.example/mcp": "food_delivery/description",
		"endpoint https://c.example/mcp": "travel/tools",
		"registry io.github.x/acme":      "finance/description",
	}
	for i := range 20 {
		want[fmt.Sprintf("endpoint https://gw%02d.example/mcp", i)] = "/common_tool_set"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	// Every server has a category now, and the run said so: the site's
	// category=none may read the rows that say none.
	var marked bool
	if err := db.SQL().QueryRow(`SELECT seq = categories_seq FROM feed_state WHERE id = 1`).Scan(&marked); err != nil {
		t.Fatal(err)
	}
	if !marked {
		t.Error("a run that categorized every server did not mark the categories complete")
	}

	// Nothing new: nothing written. Read: the Registry's entry, and the 21
	// endpoints whose tool sets the first run stored at the change number
	// it began at (a tool set stored at the mark's number is read once
	// more, as one stored there by a pass that stopped must be).
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || res.Changed != 0 || res.ToolSets != 0 ||
		!res.Since || res.Servers != 22 {
		t.Errorf("second run = %+v, %v", res, err)
	}

	// A server's text changes and a new one comes: only they are read
	// (with the Registry's entry), and what they say is what a pass over
	// every server says. Both are written: a's inputs changed, though its
	// name still decides.
	f.endpoint("https://a.example/mcp", "com.example/flight-finder", "Recipes and groceries.", nil)
	f.endpoint("https://d.example/mcp", "com.example/acme", "Recipes for dinner.", nil)
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || !res.Since || res.Servers != 3 || res.Changed != 2 {
		t.Errorf("after a changed and a new server = %+v, %v", res, err)
	}
	want["endpoint https://d.example/mcp"] = "food_delivery/description"
	if diff := cmp.Diff(want, f.categories()); diff != "" {
		t.Errorf("categories after a changed and a new server (-want +got):\n%s", diff)
	}
	f.agreesWithEveryServer()

	// A tool set stored by a pass that stopped before categorising (the
	// probe's own, so no later pass stores it again) is read by the next.
	c := f.latestProbe("https://c.example/mcp")
	if err := db.SaveEndpointTools(ctx, []store.EndpointTools{{RemoteNorm: "https://c.example/mcp", ProbeID: c,
		Fingerprint: "x", ToolNames: []string{"play_song", "music_search", "podcast_feed"}, ToolCount: 3}}); err != nil {
		t.Fatal(err)
	}
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || !res.Since || res.ToolSets != 0 || res.Changed != 1 {
		t.Errorf("after a tool set stored = %+v, %v", res, err)
	}
	if got := f.categories()["endpoint https://c.example/mcp"]; got != "media/tools" {
		t.Errorf("after a tool set stored: %q", got)
	}
	f.agreesWithEveryServer()
	f.exec(`DELETE FROM endpoint_tools WHERE remote_norm = 'https://c.example/mcp'`) // read again below
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || res.ToolSets != 1 || res.Changed != 1 {
		t.Errorf("after the tool set was dropped = %+v, %v", res, err)
	}
	if got := f.categories()["endpoint https://c.example/mcp"]; got != "travel/tools" {
		t.Errorf("after the tool set was dropped: %q", got)
	}

	// One gateway stops listing: 19 left, the set is no longer common and
	// its tools decide; the gone server's category is removed.
	f.unlist("https://gw00.example/mcp")
	f.exec(`DELETE FROM probes WHERE remote_norm = 'https://gw00.example/mcp'`)
	f.exec(`DELETE FROM probe_outcomes WHERE remote_norm = 'https://gw00.example/mcp'`)
	f.exec(`DELETE FROM endpoint_tools WHERE remote_norm = 'https://gw00.example/mcp'`)
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || res.Changed != 19 || res.Removed != 1 ||
		res.CommonSets != 0 || res.Since {
		t.Errorf("after a set stopped being common = %+v, %v", res, err)
	}
	if got := f.categories()["endpoint https://gw01.example/mcp"]; got != "travel/tools" {
		t.Errorf("gateway after the set stopped being common: %q", got)
	}

	// A newer ok probe with other tools is read again.
	rec, _ := json.Marshal(map[string]any{"outcome": "ok", "toolNames": []string{"play_song", "music_search", "podcast_feed"}, "toolCount": 3})
	f.probe("https://c.example/mcp", string(rec))
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || res.Changed != 1 || res.ToolSets != 1 || !res.Since {
		t.Errorf("after a new probe = %+v, %v", res, err)
	}
	if got := f.categories()["endpoint https://c.example/mcp"]; got != "media/tools" {
		t.Errorf("after a new probe: %q", got)
	}
	f.agreesWithEveryServer()

	// A server no longer listed loses its category in a pass over what
	// changed, and the categories stay complete.
	f.unlist("https://b.example/mcp")
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || !res.Since || res.Removed != 1 || res.Changed != 0 {
		t.Errorf("after a server left = %+v, %v", res, err)
	}
	if got, ok := f.categories()["endpoint https://b.example/mcp"]; ok {
		t.Errorf("a server no longer listed kept its category %q", got)
	}
	f.agreesWithEveryServer()
	if err := db.SQL().QueryRow(`SELECT seq = categories_seq FROM feed_state WHERE id = 1`).Scan(&marked); err != nil || !marked {
		t.Errorf("categories complete after a pass over what changed: %v, %v", marked, err)
	}

	// A pass another overtook leaves its mark out.
	mark, _, err := db.CategoryMark(ctx)
	if err != nil || mark == "" {
		t.Fatalf("mark %q, %v", mark, err)
	}
	f.exec(`UPDATE feed_state SET categorized = 'another'`)
	if ok, err := db.SwapCategoryMark(ctx, mark, mark+"0"); ok || err != nil {
		t.Errorf("swap over another pass's mark = %v, %v", ok, err)
	}
	if res, err = recompute.Run(ctx, db, recompute.Options{}); err != nil || res.Since {
		t.Errorf("after another mark = %+v, %v", res, err)
	}
}

// agreesWithEveryServer checks that a pass over every server finds
// nothing more to write or remove than the passes before it did.
func (f fixture) agreesWithEveryServer() {
	f.t.Helper()
	f.exec(`UPDATE feed_state SET categorized = ''`)
	res, err := recompute.Run(context.Background(), f.db, recompute.Options{})
	if err != nil || res.Since || res.Changed != 0 || res.Removed != 0 {
		f.t.Errorf("a pass over every server = %+v, %v", res, err)
	}
}

// latestProbe is the id of an endpoint's latest probe.
func (f fixture) latestProbe(norm string) int64 {
	f.t.Helper()
	var id int64
	if err := f.db.SQL().QueryRow(`SELECT MAX(id) FROM probes WHERE remote_norm = ?`, norm).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	return id
}
