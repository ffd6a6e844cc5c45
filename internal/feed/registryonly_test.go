package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

const testRegistry = "https://registry.example"

// withRegistryOnly adds to a filled store two latest, active Registry
// entries, each declaring a server no card declares: example.r/only (with
// a link the feed does not republish, packages and its own _meta) and
// example.s/gone.
func withRegistryOnly(t *testing.T, db *store.DB) []store.RegistryEntry {
	t.Helper()
	ctx := context.Background()
	entries := []store.RegistryEntry{
		{Source: testRegistry, Name: "example.r/only", Version: "1.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",` +
				`"name":"example.r/only","version":"1.0.0","title":"Only R","description":"only the Registry has it",` +
				`"websiteUrl":"javascript:alert(1)","repository":{"url":"https://git.example/r","source":"github"},` +
				`"remotes":[{"type":"streamable-http","url":"https://only.r.example/mcp"}],` +
				`"packages":[{"registryType":"npm","identifier":"r","version":"1.0.0","transport":{"type":"stdio"}}],` +
				`"_meta":{"io.modelcontextprotocol.registry/publisher-provided":{"x":1}}}`},
		{Source: testRegistry, Name: "example.s/gone", Version: "2.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: `{"name":"example.s/gone","version":"2.0.0","description":"s",` +
				`"remotes":[{"type":"sse","url":"https://gone.s.example/sse"}]}`},
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: testRegistry, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		u := map[string]string{"example.r/only": "https://only.r.example/mcp", "example.s/gone": "https://gone.s.example/sse"}[e.Name]
		doc := store.RegistryEntryDoc{Source: testRegistry, Name: e.Name, Version: e.Version, ChangedAt: "2026-10-01T00:00:00Z"}
		if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", []store.RegistryRemote{{URLNorm: u, URL: u, Type: "streamable-http"}}); err != nil {
			t.Fatal(err)
		}
	}
	return entries
}

// TestServeRegistryOnly: /v0.1/servers/{name}/versions finds a name only
// the Registry declares with source registry or all (a request's, or the
// server's default), as the list gives its entry; and with updated_since
// the list has such a server when its probe's outcome changed, and marks
// its entry removed when it went from the Registry.
func TestServeRegistryOnly(t *testing.T) {
	db, clock := filledStore(t, 2)
	entries := withRegistryOnly(t, db)
	c := newServer(t, db)
	const versions = "/v0.1/servers/" + "example.r%2Fonly" + "/versions"
	for _, tc := range []struct {
		path string
		want int
	}{
		{versions, http.StatusNotFound},
		{versions + "?source=card", http.StatusNotFound},
		{versions + "?source=registry", http.StatusOK},
		{versions + "?source=all", http.StatusOK},
		{versions + "?source=cards", http.StatusBadRequest},
		{versions + "/latest?source=all", http.StatusOK},
		{versions + "/1.0.0?source=registry", http.StatusOK},
		{versions + "/2.0.0?source=all", http.StatusNotFound},
		{versions + "/latest", http.StatusNotFound},
	} {
		if code, _, body := c.get(tc.path); code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.path, code, tc.want, body)
		}
	}
	// The entry is the list's, byte for byte.
	var list struct{ Servers []json.RawMessage }
	_, _, body := c.get("/v0.1/servers?source=all&search=example.r")
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Servers) != 1 {
		t.Fatalf("list: %v %s", err, body)
	}
	_, _, latest := c.get(versions + "/latest?source=all")
	if diff := cmp.Diff(string(list.Servers[0])+"\n", latest); diff != "" {
		t.Errorf("versions/latest and the list's entry differ (-list +latest):\n%s", diff)
	}
	var one struct {
		Server struct{ Name, Version, WebsiteURL string }
		Meta   struct {
			Discovery struct{ Sources []string } `json:"io.github.cardcrawl/discovery"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(latest), &one); err != nil {
		t.Fatal(err)
	}
	if one.Server.Name != "example.r/only" || one.Server.Version != "1.0.0" || one.Server.WebsiteURL != "" ||
		!cmp.Equal(one.Meta.Discovery.Sources, []string{"registry"}) {
		t.Errorf("versions/latest: %s", latest)
	}
	// serve --source all: a request without source finds it.
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: db, Source: store.FeedSourceAll}))
	t.Cleanup(srv.Close)
	if code, _, body := (client{t, srv.URL}).get(versions); code != http.StatusOK {
		t.Errorf("serve --source all, %s: %d %s", versions, code, body)
	}

	// With updated_since: a new probe outcome brings the server, a
	// re-probe with the same does not; a deleted entry is marked removed.
	ctx := context.Background()
	type change struct{ Name, UpdatedAt, Removed string }
	since := func() string {
		clock.Advance(time.Hour)
		s := clock.Now().Format(time.RFC3339Nano)
		clock.Advance(time.Hour)
		return s
	}
	changed := func(since, source string) []change {
		t.Helper()
		var out []change
		for _, s := range c.list("updated_since=" + url.QueryEscape(since) + "&source=" + source).Servers {
			ch := change{Name: s.Server.Name, UpdatedAt: s.Meta.Discovery.UpdatedAt}
			if r := s.Meta.Discovery.Removed; r != nil {
				ch.Removed = r.Reason + " " + r.At
			}
			out = append(out, ch)
		}
		return out
	}
	probe := func(outcome string) {
		p := store.ProbeRow{RemoteNorm: "https://only.r.example/mcp", URL: "https://only.r.example/mcp",
			ProbedAt: clock.Now().Format(time.RFC3339Nano), Outcome: outcome}
		if err := db.AddProbe(ctx, 0, p); err != nil {
			t.Fatal(err)
		}
	}
	now := func() string { return store.FormatTime(clock.Now()) }

	t1 := since()
	probe("ok")
	want := []change{{Name: "example.r/only", UpdatedAt: now()}}
	if diff := cmp.Diff(want, changed(t1, "all")); diff != "" {
		t.Errorf("after a first probe (-want +got):\n%s", diff)
	}
	if got := changed(t1, "card"); len(got) != 0 {
		t.Errorf("after a first probe, source card: %v", got)
	}
	t2 := since()
	probe("ok")
	if got := changed(t2, "registry"); len(got) != 0 {
		t.Errorf("after a re-probe with the same outcome: %v", got)
	}
	t3 := since()
	gone := entries[1]
	gone.Status = "deleted"
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: testRegistry, Entries: []store.RegistryEntry{gone}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneRegistryRemotes(ctx); err != nil {
		t.Fatal(err)
	}
	want = []change{{Name: "example.s/gone", UpdatedAt: now(), Removed: store.RemovedRegistryDeleted + " " + now()}}
	for _, source := range []string{"all", "registry"} {
		if diff := cmp.Diff(want, changed(t3, source)); diff != "" {
			t.Errorf("after the Registry deleted an entry, source %s (-want +got):\n%s", source, diff)
		}
	}
	if got := changed(t3, "card"); len(got) != 0 {
		t.Errorf("after the Registry deleted an entry, source card: %v", got)
	}
	for _, s := range c.list("source=all&limit=100").Servers {
		if s.Server.Name == "example.s/gone" {
			t.Error("a removed Registry entry is listed without updated_since")
		}
	}
}

// TestAICatalogRegistryOnly: with source registry or all, the AI Catalog
// lists each Registry entry of servers no card declares as an inline
// Server Card made of its server.json's shared fields (a conformant card,
// links made safe, without packages or the Registry's _meta), under an
// identifier minted under the publisher domain, saying where it was found;
// without a publisher domain it is left out and counted.
func TestAICatalogRegistryOnly(t *testing.T) {
	db, _ := filledStore(t, 2)
	withRegistryOnly(t, db)
	ctx := context.Background()
	write := func(source, domain string) (entries []map[string]json.RawMessage, skipped int) {
		t.Helper()
		var buf bytes.Buffer
		err := feed.Write(ctx, &buf, "ai-catalog", db, feed.WriteOptions{Filter: store.FeedFilter{Source: source},
			Catalog: feed.CatalogOptions{PublisherDomain: domain}, Skipped: &skipped})
		if err != nil {
			t.Fatal(err)
		}
		var cat struct{ Entries []map[string]json.RawMessage }
		if err := json.Unmarshal(buf.Bytes(), &cat); err != nil {
			t.Fatal(err)
		}
		for _, e := range cat.Entries {
			if _, ok := e["data"]; ok && bytes.Contains(e["extensions"], []byte(`"registry"`)) {
				entries = append(entries, e)
			}
		}
		return entries, skipped
	}
	if got, _ := write("card", "directory.example"); len(got) != 0 {
		t.Errorf("source card: %d Registry entries", len(got))
	}
	v, err := servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{"registry", "all"} {
		got, skipped := write(source, "directory.example")
		if len(got) != 2 || skipped != 0 {
			t.Fatalf("source %s: %d Registry entries, %d skipped", source, len(got), skipped)
		}
		e := got[0]
		var head struct{ Identifier, Type, Version, DisplayName string }
		b, _ := json.Marshal(e)
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatal(err)
		}
		wantHead := struct{ Identifier, Type, Version, DisplayName string }{
			feed.MintIdentifier("directory.example", testRegistry+"/v0.1/servers/example.r%2Fonly"),
			"application/mcp-server-card+json", "1.0.0", "Only R"}
		if diff := cmp.Diff(wantHead, head); diff != "" {
			t.Errorf("source %s: entry (-want +got):\n%s", source, diff)
		}
		wantExt := `{"io.github.cardcrawl/discovery":{"foundIn":"` + testRegistry +
			`/v0.1/servers/example.r%2Fonly/versions/1.0.0","registry":"` + testRegistry + `","sources":["registry"]}}`
		if diff := cmp.Diff(wantExt, compact(t, e["extensions"])); diff != "" {
			t.Errorf("source %s: extensions (-want +got):\n%s", source, diff)
		}
		wantCard := `{"$schema":"` + servercard.SchemaURL + `","name":"example.r/only","version":"1.0.0",` +
			`"description":"only the Registry has it","title":"Only R","repository":{"url":"https://git.example/r","source":"github"},` +
			`"remotes":[{"type":"streamable-http","url":"https://only.r.example/mcp"}]}`
		if diff := cmp.Diff(wantCard, compact(t, e["data"])); diff != "" {
			t.Errorf("source %s: card (-want +got):\n%s", source, diff)
		}
		res := v.Check(e["data"])
		if res.Grade != servercard.Conformant {
			t.Errorf("source %s: the card made of server.json is %s: %v", source, res.Grade, res.Findings)
		}
	}
	if got, skipped := write("all", ""); len(got) != 0 || skipped < 2 {
		t.Errorf("without a publisher domain: %d Registry entries, %d skipped", len(got), skipped)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
