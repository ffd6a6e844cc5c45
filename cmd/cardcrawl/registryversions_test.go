package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestServeRegistryVersions: after a sync, serve lists the versions of a
// name only the Registry declares as the Registry does (the double
// answering as its handlers do): the same versions, newest published
// first, deleted ones only with include_deleted; and latest is the
// Registry's latest, not the newest published.
func TestServeRegistryVersions(t *testing.T) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d := registrytest.New(func() time.Time { clock = clock.Add(time.Minute); return clock })
	const name = "com.example/multi"
	for _, v := range []struct {
		version, url string
		latest       bool
	}{
		{"1.0.0", "https://old.example.com/mcp", true},
		{"1.1.0", "https://old.example.com/mcp", true},
		{"2.0.0", "https://multi.example.com/mcp", true},
		// A fix to the old line, published last: newest, not latest.
		{"1.1.1", "https://old.example.com/mcp", false},
	} {
		s := fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",`+
			`"name":%q,"description":"Multi","version":%q,"remotes":[{"type":"streamable-http","url":%q}]}`, name, v.version, v.url)
		if err := d.Publish(json.RawMessage(s), v.latest); err != nil {
			t.Fatal(err)
		}
	}
	d.SetStatus(name, "1.1.0", "deleted", "withdrawn")
	// A name whose latest version is deprecated: the Registry still lists
	// it, and its versions, and so does the feed.
	const old = "com.example/retired"
	for _, v := range []string{"0.9.0", "1.0.0"} {
		s := fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",`+
			`"name":%q,"description":"Retired","version":%q,"remotes":[{"type":"streamable-http","url":"https://retired.example.com/mcp"}]}`, old, v)
		if err := d.Publish(json.RawMessage(s), true); err != nil {
			t.Fatal(err)
		}
	}
	d.SetStatus(old, "1.0.0", "deprecated", "use com.example/multi")
	d.SetStatus(old, "0.9.0", "deleted", "withdrawn")
	dbPath := filepath.Join(t.TempDir(), "r.db")
	if code, _, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath}, serveDouble(t, d)...)...); code != exitOK {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	db, err := store.Open(context.Background(), dbPath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: db, Source: store.FeedSourceAll}))
	t.Cleanup(srv.Close)

	type version struct {
		Version, Status string
		Latest          bool
	}
	// What each answers: its versions, in order, with their status.
	registry := func(path string) (int, []version) {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		var list struct {
			Servers []struct {
				Server struct{ Version string }
				Meta   struct {
					Official registrytest.Official `json:"io.modelcontextprotocol.registry/official"`
				} `json:"_meta"`
			}
		}
		_ = json.Unmarshal(w.Body.Bytes(), &list)
		var out []version
		for _, s := range list.Servers {
			out = append(out, version{s.Server.Version, s.Meta.Official.Status, s.Meta.Official.IsLatest})
		}
		return w.Code, out
	}
	served := func(path string) (int, []version) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list struct {
			Servers []feed.RegistryEntry
		}
		_ = json.NewDecoder(resp.Body).Decode(&list)
		var out []version
		for _, s := range list.Servers {
			v := version{Version: s.Server.Version}
			if rv := s.Meta.Discovery.RegistryVersion; rv != nil {
				v.Status, v.Latest = rv.Status, rv.IsLatest
			}
			out = append(out, v)
		}
		return resp.StatusCode, out
	}
	const versions = "/v0.1/servers/com.example%2Fmulti/versions"
	const retired = "/v0.1/servers/com.example%2Fretired/versions"
	for _, path := range []string{versions, retired} {
		for _, query := range []string{"", "?include_deleted=true", "?include_deleted=false"} {
			wantCode, want := registry(path + query)
			code, got := served(path + query)
			if code != wantCode || len(want) < 1 || (path == versions && len(want) < 3) {
				t.Errorf("%s%s: %d, the Registry %d %v", path, query, code, wantCode, want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s%s (-Registry +served):\n%s", path, query, diff)
			}
		}
	}
	resp, err := http.Get(srv.URL + retired + "/latest")
	if err != nil {
		t.Fatal(err)
	}
	var e feed.RegistryEntry
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if rv := e.Meta.Discovery.RegistryVersion; resp.StatusCode != http.StatusOK || e.Server.Version != "1.0.0" || rv == nil ||
		rv.Status != "deprecated" || !rv.IsLatest || len(e.Meta.Discovery.Endpoints) != 1 {
		t.Errorf("retired latest: %d %+v", resp.StatusCode, e)
	}
	// The list keeps a deprecated server, as the Registry's latest
	// versions do.
	_, want := registry("/v0.1/servers?search=retired&version=latest")
	if _, got := served("/v0.1/servers?search=retired"); len(want) != 1 || !cmp.Equal(want, got) {
		t.Errorf("the list of deprecated names: %v, the Registry %v", got, want)
	}
	for path, want := range map[string]int{
		"/latest": http.StatusOK, "/1.0.0": http.StatusOK, "/1.1.1": http.StatusOK,
		"/1.1.0": http.StatusNotFound, "/1.1.0?include_deleted=true": http.StatusOK, "/3.0.0": http.StatusNotFound,
	} {
		resp, err := http.Get(srv.URL + versions + path)
		if err != nil {
			t.Fatal(err)
		}
		var e feed.RegistryEntry
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
		if path == "/latest" && (e.Server.Version != "2.0.0" || e.Meta.Discovery.RegistryVersion == nil ||
			!e.Meta.Discovery.RegistryVersion.IsLatest || len(e.Meta.Discovery.Endpoints) != 1) {
			t.Errorf("latest: %+v", e)
		}
	}
	if resp, err := http.Get(srv.URL + versions + "?include_deleted=yes"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("include_deleted=yes: %v %v", resp, err)
	}
}
