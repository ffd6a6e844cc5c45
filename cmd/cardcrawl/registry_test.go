package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
)

// registryDouble serves a few servers as registry.example.com (a name the
// httptest certificate covers) and returns the network flags reaching it.
func registryDouble(t *testing.T) (*registrytest.Double, []string) {
	t.Helper()
	d := registrytest.New(nil)
	for i, s := range []string{
		`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/weather","description":"Weather","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://example.com/mcp"}]}`,
		`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json","name":"io.github.octo/tool","description":"` + strings.Repeat("long ", 30) + `","version":"2.0.0","repository":{"url":"https://github.com/octo/tool","source":"github"}}`,
	} {
		if err := d.Publish(json.RawMessage(s), true); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	return d, serveDouble(t, d)
}

// serveDouble serves d as registry.example.com and returns the network
// flags reaching it.
func serveDouble(t *testing.T, d *registrytest.Double) []string {
	t.Helper()
	srv := httptest.NewTLSServer(d)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--url", "https://registry.example.com", "--connect-to", fmt.Sprintf("registry.example.com:443:%s:%s", u.Hostname(), u.Port()), "--ca-cert", ca}
}

func TestRegistrySyncDiffNamespaces(t *testing.T) {
	d, netArgs := registryDouble(t)
	dbPath := filepath.Join(t.TempDir(), "r.db")
	code, stdout, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath, "--json"}, netArgs...)...)
	if code != exitOK {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	var rep registrySyncReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("sync output: %v\n%s", err, stdout)
	}
	if rep.Sync.Entries != 2 || rep.Sync.Invalid != 1 || !rep.Sync.Complete || rep.Reconcile == nil || rep.Reconcile.RegistryOnly != 2 {
		t.Errorf("sync report = %+v", rep)
	}
	// A second sync is incremental: one request.
	before := len(d.Requests())
	if code, _, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath}, netArgs...)...); code != exitOK {
		t.Fatalf("resync exit %d: %s", code, stderr)
	}
	if reqs := d.Requests()[before:]; len(reqs) != 1 || !strings.Contains(reqs[0], "updated_since=") {
		t.Errorf("resync requests = %q", reqs)
	}

	code, stdout, stderr = run(t, "", "diff", "--db", dbPath, "--json")
	if code != exitOK {
		t.Fatalf("diff exit %d: %s", code, stderr)
	}
	var res reconcile.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	want := []reconcile.RegistryOnly{
		{Source: "https://registry.example.com", Name: "com.example/weather", Version: "1.0.0", Status: "active"},
		{Source: "https://registry.example.com", Name: "io.github.octo/tool", Version: "2.0.0", Status: "active"},
	}
	if diff := cmp.Diff(want, res.RegistryOnly); diff != "" {
		t.Errorf("registry-only (-want +got):\n%s", diff)
	}
	if code, stdout, _ := run(t, "", "diff", "--db", dbPath); code != exitOK || !strings.Contains(stdout, "REGISTRY ONLY (2)") {
		t.Errorf("diff table (exit %d):\n%s", code, stdout)
	}

	code, stdout, stderr = run(t, "", "namespaces", "--db", dbPath)
	if code != exitOK {
		t.Fatalf("namespaces exit %d: %s", code, stderr)
	}
	squeezed := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{"com.example domain unchecked - not checked yet (run with --check)", "io.github.octo github github",
		"1 of 1 repositories under octo", "1 domain namespaces are unchecked: no HTTP or DNS lookup has run for them yet."} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("namespaces output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRegistrySyncBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "dump.csv")
	os.WriteFile(notJSON, []byte("name,version\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"registry"}, "name a subcommand"},
		{"unknown subcommand", []string{"registry", "pull"}, `unknown subcommand "pull"`},
		{"dump not json", []string{"registry", "sync", "--db", filepath.Join(dir, "a.db"), "--from-file", notJSON}, "--from-file"},
		{"missing dump", []string{"registry", "sync", "--db", filepath.Join(dir, "b.db"), "--from-file", filepath.Join(dir, "absent.json")}, "--from-file"},
		{"bad url", []string{"registry", "sync", "--db", filepath.Join(dir, "c.db"), "--url", "ftp://x"}, "--url"},
		// The fetch guard would refuse plain http at the first request;
		// saying so up front spares the retries and the empty database.
		{"http url", []string{"registry", "sync", "--db", filepath.Join(dir, "e.db"), "--url", "http://registry.example.com"}, "not https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
	for _, db := range []string{"a.db", "c.db", "e.db"} {
		if _, err := os.Stat(filepath.Join(dir, db)); err == nil {
			t.Errorf("a rejected command still created %s", db)
		}
	}
}

func TestRegistrySyncFromFile(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.json")
	os.WriteFile(dump, []byte(`[{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/a","description":"d","version":"1.0.0"}]`), 0o600)
	code, stdout, stderr := run(t, "", "registry", "sync", "--db", filepath.Join(dir, "d.db"), "--from-file", dump)
	if code != exitOK || !strings.Contains(stdout, "dump import, 1 file, 1 entries stored") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// Without --url the entries are filed under the dump, not under the
	// official Registry's name.
	if !strings.Contains(stdout, "file:"+dump) {
		t.Errorf("source is not the dump file:\n%s", stdout)
	}
}

// TestRegistrySyncRefusedIsTemporary: a registry that refuses connections
// (here a closed loopback port, reached through --connect-to) is down for
// now, not gone: the sync says the failure is temporary and that the next
// sync resumes, and the next sync does.
func TestRegistrySyncRefusedIsTemporary(t *testing.T) {
	_, netArgs := registryDouble(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dbPath := filepath.Join(t.TempDir(), "r.db")
	refused := slices.Clone(netArgs)
	refused[3] = fmt.Sprintf("registry.example.com:443:127.0.0.1:%d", closed)
	code, stdout, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath}, refused...)...)
	want := "connection refused; a temporary failure (connect): progress is kept and the next sync resumes from page 1"
	if code != exitRun || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want %d and %q\nstdout %s\nstderr %s", code, exitRun, want, stdout, stderr)
	}
	code, stdout, stderr = run(t, "", append([]string{"registry", "sync", "--db", dbPath}, netArgs...)...)
	if code != exitOK || !strings.Contains(stdout, "2 entries stored") || !strings.Contains(stdout, "complete") {
		t.Errorf("the next sync: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// TestRegistrySyncInterruptedExits130: Ctrl-C while a page is in flight
// ends the sync with the shell's SIGINT status and a line saying how to
// continue, not as a failure.
func TestRegistrySyncInterruptedExits130(t *testing.T) {
	d, netArgs := registryDouble(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		cancel()
		<-r.Context().Done() // the client gives up on the request
		return true
	}
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}
	code := runMain(ctx, e, append([]string{"registry", "sync", "--db", filepath.Join(t.TempDir(), "i.db")}, netArgs...))
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitInterrupted, out.String(), errOut.String())
	}
	if want := "interrupted after 0 pages (0 entries stored); run the same command again to resume"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr %q lacks %q", errOut.String(), want)
	}
}

// TestRegistryEntries: after a sync, users can see which entries the
// Registry would reject today, and why.
func TestRegistryEntries(t *testing.T) {
	_, netArgs := registryDouble(t)
	dbPath := filepath.Join(t.TempDir(), "e.db")
	code, stdout, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath}, netArgs...)...)
	if code != exitOK {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	if want := "with errors: io.github.octo/tool@2.0.0 (see 'cardcrawl registry entries --invalid')"; !strings.Contains(stdout, want) {
		t.Errorf("sync output lacks %q:\n%s", want, stdout)
	}

	code, stdout, stderr = run(t, "", "registry", "entries", "--db", dbPath)
	if code != exitOK {
		t.Fatalf("entries exit %d: %s", code, stderr)
	}
	squeezed := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{
		"com.example/weather 1.0.0 active yes 2025-12-11 -",
		"io.github.octo/tool 2.0.0 active yes 2025-09-29 schema_version_deprecated (warning), description_too_long (error)",
		"2 entries, 1 with errors the Registry would reject today",
	} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("entries output lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = run(t, "", "registry", "entries", "--db", dbPath, "--invalid", "--json")
	if code != exitOK {
		t.Fatalf("entries --invalid --json exit %d: %s", code, stderr)
	}
	var recs []registryEntryRecord
	if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(recs) != 1 || recs[0].Name != "io.github.octo/tool" || !recs[0].Invalid || recs[0].SchemaVersion != "2025-09-29" {
		t.Fatalf("invalid entries = %+v", recs)
	}
	var codes []string
	for _, f := range recs[0].Findings {
		codes = append(codes, f.Code)
		if f.Message == "" {
			t.Errorf("finding %s has no message", f.Code)
		}
	}
	if diff := cmp.Diff([]string{"schema_version_deprecated", "description_too_long"}, codes); diff != "" {
		t.Errorf("finding codes (-want +got):\n%s", diff)
	}

	code, stdout, _ = run(t, "", "registry", "entries", "--db", dbPath, "--name", "com.example/weather")
	if code != exitOK || strings.Contains(stdout, "octo") || !strings.Contains(stdout, "com.example/weather") {
		t.Errorf("--name: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := run(t, "", "registry", "entries", "--help"); code != exitOK || !strings.Contains(stdout, "Usage: cardcrawl registry entries") || !strings.Contains(stdout, "-invalid") {
		t.Errorf("entries --help: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "", "registry", "entries", "--db", filepath.Join(t.TempDir(), "absent.db")); code != exitUsage || !strings.Contains(stderr, "no database") {
		t.Errorf("missing database: exit %d, %s", code, stderr)
	}
}

// TestRegistryEntriesDeletedLatest: when every version was deleted and a
// lower one published afterwards, the Registry keeps the deleted version
// latest; 'registry entries' shows that and says what it means.
func TestRegistryEntriesDeletedLatest(t *testing.T) {
	d, netArgs := registryDouble(t)
	const name = "com.example/seeded"
	doc := func(v string) json.RawMessage {
		return json.RawMessage(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"` + name + `","description":"d","version":"` + v + `"}`)
	}
	if err := d.Publish(doc("0.0.1-seed"), true); err != nil {
		t.Fatal(err)
	}
	d.SetStatus(name, "0.0.1-seed", "deleted", "spam")
	if err := d.Publish(doc("0.0.0"), false); err != nil { // as the real Registry answered
		t.Fatal(err)
	}
	// Twenty-one more whose one version was deleted: the line names twenty
	// servers and counts the rest.
	for i := range 21 {
		gone := fmt.Sprintf("com.example/gone%02d", i)
		body := `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"` + gone +
			`","description":"d","version":"1.0.0"}`
		if err := d.Publish(json.RawMessage(body), true); err != nil {
			t.Fatal(err)
		}
		d.SetStatus(gone, "1.0.0", "deleted", "spam")
	}
	dbPath := filepath.Join(t.TempDir(), "e.db")
	if code, _, stderr := run(t, "", append([]string{"registry", "sync", "--db", dbPath}, netArgs...)...); code != exitOK {
		t.Fatalf("sync exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "", "registry", "entries", "--db", dbPath)
	if code != exitOK {
		t.Fatalf("entries exit %d: %s", code, stderr)
	}
	if want := "com.example/gone19 and 2 more (the Registry keeps"; !strings.Contains(strings.Join(strings.Fields(stdout), " "), want) {
		t.Errorf("entries output lacks %q:\n%s", want, stdout)
	}
	code, stdout, stderr = run(t, "", "registry", "entries", "--db", dbPath, "--name", name)
	if code != exitOK {
		t.Fatalf("entries exit %d: %s", code, stderr)
	}
	squeezed := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{
		name + " 0.0.0 active no", name + " 0.0.1-seed deleted yes, deleted",
		"latest version deleted: " + name + " (the Registry keeps a deleted version latest",
	} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("entries output lacks %q:\n%s", want, stdout)
		}
	}
}
