package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
)

// TestExportSources reads the demo's database the way a directory would:
// one record per server, with --source choosing which, and each record
// saying where it was found and what the Registry, the reconciliation and
// the namespace check say of it.
func TestExportSources(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	if code, _, stderr := run(t, "", "demo", "--db", db); code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	records := func(args ...string) []feed.Record {
		t.Helper()
		code, stdout, stderr := run(t, "", append([]string{"export", "--db", db, "--format", "jsonl"}, args...)...)
		if code != exitOK {
			t.Fatalf("export %v: exit %d: %s", args, code, stderr)
		}
		var out []feed.Record
		sc := bufio.NewScanner(strings.NewReader(stdout))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r feed.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%v: %s", err, sc.Text())
			}
			out = append(out, r)
		}
		return out
	}
	sources := func(rs []feed.Record) map[string]int {
		n := map[string]int{}
		for _, r := range rs {
			n[strings.Join(r.Sources, "+")]++
		}
		return n
	}
	cards, all, reg := records(), records("--source", "all"), records("--source", "registry")
	if got := sources(cards); got["registry"] > 0 || got["card"] == 0 || got["card+registry"] == 0 {
		t.Errorf("default export: sources %v, want cards only, some also in the Registry", got)
	}
	if got := sources(reg); got["card"] > 0 || got["registry"] == 0 || got["card+registry"] == 0 {
		t.Errorf("--source registry: sources %v", got)
	}
	if d := cmp.Diff(sources(all), map[string]int{"card": sources(cards)["card"],
		"card+registry": sources(cards)["card+registry"], "registry": sources(reg)["registry"]}); d != "" {
		t.Errorf("--source all is cards and Registry-only servers (-got +want):\n%s", d)
	}
	i := slices.IndexFunc(all, func(r feed.Record) bool { return r.Endpoint == "https://weather.oldstyle.example/mcp" })
	if i < 0 {
		t.Fatal("--source all lacks the endpoint only the Registry declares")
	}
	if r := all[i]; r.CardKey != "" || r.Registry == nil || r.Registry.Name != "example.oldstyle/weather" ||
		r.Registry.Status != "active" || r.Description == "" || r.Namespace == nil || r.Namespace.Namespace != "example.oldstyle" {
		t.Errorf("Registry-only record: %+v", r)
	}
	i = slices.IndexFunc(all, func(r feed.Record) bool { return r.Endpoint == "https://search.retired.example/sse" })
	if i < 0 || all[i].Registry == nil || all[i].Registry.Status != "deprecated" || all[i].Probe != nil {
		t.Errorf("the deprecated Registry server, listed with its status and never probed: %d %+v", i, all)
	}
	i = slices.IndexFunc(all, func(r feed.Record) bool { return r.Endpoint == "https://api.forge-ai.example/mcp" })
	if i < 0 {
		t.Fatal("no forge record")
	}
	if r := all[i]; r.Reconcile == nil || r.Reconcile.Basis != "remote_url" || r.Namespace == nil ||
		r.Namespace.Method != "http" || r.Registry == nil || r.ProbeHistory == nil || r.ProbeHistory.Probes == 0 {
		t.Errorf("forge record: reconcile %+v namespace %+v registry %+v history %+v", r.Reconcile, r.Namespace,
			r.Registry, r.ProbeHistory)
	}
	// The Registry shape with source all: the cards' entries, then the
	// Registry's own entry for the server no card declares.
	code, stdout, stderr := run(t, "", "export", "--db", db, "--format", "json", "--source", "all")
	if code != exitOK {
		t.Fatalf("export json --source all: exit %d: %s", code, stderr)
	}
	var list struct {
		Servers []feed.RegistryEntry
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	first := slices.IndexFunc(list.Servers, func(e feed.RegistryEntry) bool { return e.Meta.Discovery.CardKey == "" })
	if first < 0 {
		t.Fatal("export json --source all has no Registry entry")
	}
	for _, e := range list.Servers[:first] {
		if e.Meta.Discovery.Sources != nil {
			t.Errorf("a card's entry: %+v", e.Meta.Discovery)
		}
	}
	// Registry-only, a deprecated one too: the Registry's list keeps it.
	endpoints := map[string]string{"example.oldstyle/weather": "https://weather.oldstyle.example/mcp",
		"example.retired/old-search": "https://search.retired.example/sse"}
	var names []string
	for _, e := range list.Servers[first:] {
		names = append(names, e.Server.Name)
		if d := e.Meta.Discovery; d.CardKey != "" || !slices.Equal(d.Sources, []string{"registry"}) ||
			len(d.Endpoints) != 1 || d.Endpoints[0].Endpoint != endpoints[e.Server.Name] || len(e.Server.Remotes) == 0 {
			t.Errorf("Registry entry of export json --source all: %+v", e)
		}
	}
	if diff := cmp.Diff([]string{"example.oldstyle/weather", "example.retired/old-search"}, names); diff != "" {
		t.Errorf("Registry entries of export json --source all (-want +got):\n%s", diff)
	}

	// The AI Catalog with source all: the Registry's server as an inline
	// card under an identifier minted under the publisher domain.
	code, stdout, stderr = run(t, "", "export", "--db", db, "--format", "ai-catalog", "--source", "all",
		"--publisher-domain", "directory.example")
	if code != exitOK {
		t.Fatalf("export ai-catalog --source all: exit %d: %s", code, stderr)
	}
	type catalogEntry struct {
		Identifier string
		Data       struct{ Name string }
		Extensions map[string]struct{ Sources []string }
	}
	var catalog struct{ Entries []catalogEntry }
	if err := json.Unmarshal([]byte(stdout), &catalog); err != nil {
		t.Fatal(err)
	}
	i = slices.IndexFunc(catalog.Entries, func(e catalogEntry) bool { return e.Data.Name == "example.oldstyle/weather" })
	if i < 0 || !strings.HasPrefix(catalog.Entries[i].Identifier, "urn:air:directory.example:mcp-server-card:") ||
		!slices.Equal(catalog.Entries[i].Extensions[feed.MetaKey].Sources, []string{"registry"}) {
		t.Errorf("export ai-catalog --source all: the Registry's server is missing or wrong: %s", stdout)
	}

	for _, args := range [][]string{
		{"export", "--db", db, "--source", "cards"},
		{"servers", "--db", db, "--source", "both"},
		{"serve", "--db", db, "--source", "x"},
		{"export", "--db", db, "--category", "weather"},
	} {
		code, _, stderr := run(t, "", args...)
		flag := args[len(args)-2]
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, flag) {
			t.Errorf("%v: exit %d, stderr %q; want one line about %s and exit %d", args, code, stderr, flag, exitUsage)
		}
	}
	code, stdout, _ = run(t, "", "servers", "--db", db, "--source", "all")
	if code != exitOK || !strings.Contains(stdout, "SOURCES") || !strings.Contains(stdout, "weather.oldstyle.example") {
		t.Errorf("servers --source all: exit %d\n%s", code, stdout)
	}
}
