package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/internal/site"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/store"
)

// run runs the CLI in-process and returns its exit code and output.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader(stdin)}
	code = runMain(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no command", nil, "Usage: cardcrawl"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"crawl", "--nope"}, "flag provided but not defined: -nope"},
		{"no domains", []string{"crawl", "--db", filepath.Join(dir, "x.db")}, "no domains given"},
		{"missing domains file", []string{"crawl", "--domains", filepath.Join(dir, "absent.txt")}, "--domains"},
		{"bad connect-to", []string{"crawl", "--connect-to", "nonsense", "example.com"}, "--connect-to"},
		{"bad probe mode", []string{"crawl", "--probe", "sometimes", "--db", filepath.Join(dir, "y.db"), "example.com"}, "--probe"},
		{"missing database", []string{"servers", "--db", filepath.Join(dir, "absent.db")}, "no database at"},
		{"bad export format", []string{"export", "--format", "xml"}, "--format"},
		{"bad servers grade", []string{"servers", "--grade", "good"}, "--grade must be one of conformant, near_conformant, non_conformant, not \"good\""},
		{"bad servers outcome", []string{"servers", "--outcome", "dns"}, "--outcome must be one of blocked,"},
		{"bad export grade", []string{"export", "--format", "csv", "--grade", "Conformant"}, "--grade must be one of"},
		{"bad export outcome", []string{"export", "--outcome", "nope"}, "or none, not \"nope\""},
		{"bad max depth", []string{"crawl", "--max-depth", "-1", "--db", filepath.Join(dir, "y.db"), "example.com"}, "--max-depth"},
		{"not a domain", []string{"crawl", "--db", filepath.Join(dir, "y.db"), "bad domain!!"}, "not a domain name"},
		{"prune without an age", []string{"prune", "--db", filepath.Join(dir, "y.db")}, "--older-than is required"},
		{"prune too recent", []string{"prune", "--older-than", "12h"}, "at least 1d, not 12h0m0s"},
		{"prune bad age", []string{"prune", "--older-than", "3 weeks"}, "not an age"},
		{"prune missing database", []string{"prune", "--older-than", "90d", "--db", filepath.Join(dir, "absent.db")},
			"no database at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if tt.args != nil && stdout != "" {
				t.Errorf("a usage error wrote to stdout: %q", stdout)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q lacks %q", stderr, tt.want)
			}
			if tt.args != nil && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("want one line on stderr, got %q", stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "y.db")); err == nil {
				t.Errorf("a usage error created the database")
			}
		})
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			code, stdout, _ := run(t, "", name, "--help")
			if code != exitOK || strings.Count(stdout, "Usage: cardcrawl "+name) != 1 {
				t.Errorf("%s --help: exit %d, want the usage once on stdout, got %q", name, code, stdout)
			}
		})
	}
}

// fixtureWeb serves a txtar archive of fixtures as a simulated web, closed
// when the test ends, and returns it with its CA written to a PEM file in
// dir, a temporary directory for the test's files.
func fixtureWeb(t *testing.T, archive string) (web *simweb.Web, ca, dir string) {
	t.Helper()
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.AddFixtures([]byte(archive)); err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	dir = t.TempDir()
	ca = filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return web, ca, dir
}

// TestCrawlThroughFlags runs the crawl the way a user would against their
// own test setup: the simulated web is reached only through --connect-to and
// --ca-cert, and the domains come from stdin.
func TestCrawlThroughFlags(t *testing.T) {
	web, ca, dir := fixtureWeb(t, `
-- one.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:one.example:mcp:a","type":"application/mcp-server-card+json","url":"https://cards.example.org/a"}]}
-- cards.example.org/a --
{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/a","version":"1.0.0","description":"A","title":"Server A","remotes":[{"type":"streamable-http","url":"https://a.example.org/mcp"}]}
-- two.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"b","type":"application/mcp-server-card+json","data":{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/b","version":"2.0.0","description":"B","remotes":[{"type":"streamable-http","url":"https://a.example.org/mcp/"}]}}]}
`)
	db := filepath.Join(dir, "c.db")

	code, stdout, stderr := run(t, "# list\none.example\ntwo.example\nnothing.example\n",
		"crawl", "--db", db, "--connect-to", web.ConnectTo(), "--ca-cert", ca, "--domains", "-", "--probe", "never", "--json")
	if code != exitOK {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	var sum struct {
		Crawled  int
		Outcomes map[string]int
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("crawl --json: %v\n%s", err, stdout)
	}
	if diff := cmp.Diff(map[string]int{"catalog": 2, "no_catalog": 1}, sum.Outcomes); diff != "" || sum.Crawled != 3 {
		t.Errorf("summary crawled %d, outcomes (-want +got):\n%s", sum.Crawled, diff)
	}

	code, stdout, _ = run(t, "", "domains", "--db", db, "--json")
	var domains []store.DomainRow
	if err := json.Unmarshal([]byte(stdout), &domains); code != exitOK || err != nil {
		t.Fatalf("domains --json: exit %d, %v", code, err)
	}
	got := map[string]string{}
	for _, d := range domains {
		got[d.Domain] = d.Outcome + "/" + d.Class
	}
	if diff := cmp.Diff(map[string]string{"one.example": "catalog/", "two.example": "catalog/",
		"nothing.example": "no_catalog/http_404"}, got); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}

	// Both domains list the same endpoint (trailing slash aside): one server,
	// two listings.
	code, stdout, _ = run(t, "", "export", "--db", db, "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("export exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1 {
		t.Fatalf("export jsonl: %d lines, want 1:\n%s", len(lines), stdout)
	}
	var rec feed.Record
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range rec.ListedBy {
		listed = append(listed, l.Domain)
	}
	sort.Strings(listed)
	if rec.EndpointNormalized != "https://a.example.org/mcp" || !cmp.Equal(listed, []string{"one.example", "two.example"}) {
		t.Errorf("record endpoint %q listed by %v", rec.EndpointNormalized, listed)
	}

	code, stdout, _ = run(t, "", "export", "--db", db, "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != exitOK || err != nil || len(rows) != 2 || !cmp.Equal(rows[0], feed.CSVHeader) {
		t.Errorf("export csv: exit %d, err %v, rows %v", code, err, rows)
	}
	for _, format := range []string{"json", "ai-catalog"} {
		code, stdout, _ = run(t, "", "export", "--db", db, "--format", format)
		if code != exitOK || !json.Valid([]byte(stdout)) {
			t.Errorf("export %s: exit %d, valid JSON %v", format, code, json.Valid([]byte(stdout)))
		}
	}
	code, stdout, _ = run(t, "", "servers", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "https://a.example.org/mcp") {
		t.Errorf("servers: exit %d\n%s", code, stdout)
	}

	// With --connect-to, namespace checks stay on the rerouted HTTP path and
	// never ask the machine's DNS.
	code, stdout, stderr = run(t, "", "namespaces", "--check", "--db", db, "--connect-to", web.ConnectTo(), "--ca-cert", ca)
	if code != exitOK || !strings.Contains(stderr, "DNS proofs not checked") || !strings.Contains(stdout, "com.example") {
		t.Errorf("namespaces --check: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The checks moved the change number; the site's ns=unknown and
	// category=none still read their indexes (their marks are renewed).
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var nsMarked, catMarked bool
	if err := conn.QueryRow(`SELECT seq = namespaces_seq, seq = categories_seq FROM feed_state WHERE id = 1`).Scan(&nsMarked,
		&catMarked); err != nil {
		t.Fatal(err)
	}
	if !nsMarked || !catMarked {
		t.Errorf("after namespaces --check: namespaces marked %v, categories marked %v; want both", nsMarked, catMarked)
	}
}

// TestDemo runs the demo end to end: it must work offline and find servers.
func TestDemo(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	code, stdout, stderr := run(t, "", "demo", "--db", db)
	if code != exitOK {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Domains:", "Servers:", "forge.example", "requires_login", db} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	checkDiff(t, db)

	// The signed catalog, as `catalogs` shows it: its snapshot and first
	// release verified (a key made when the demo's web starts), its second
	// card changed since the catalog pinned it, so its endorsement does not
	// cover what is served.
	code, stdout, stderr = run(t, "", "catalogs", "--db", db, "--domain", "signed.example", "--json")
	if code != exitOK {
		t.Fatalf("catalogs: exit %d: %s", code, stderr)
	}
	var cats []struct {
		URL      string
		Findings []struct{ Code, Path string }
	}
	if err := json.Unmarshal([]byte(stdout), &cats); err != nil || len(cats) != 1 {
		t.Fatalf("catalogs --json: %v\n%s", err, stdout)
	}
	var got []string
	for _, f := range cats[0].Findings {
		got = append(got, f.Code+" "+f.Path)
	}
	want := []string{
		"entry_digest_mismatch /entries/1/digest",
		"signature_verified /signature",
		"signature_verified /entries/0/trustManifests/0/signature",
		"signature_not_endorsement /entries/1/trustManifests/0/signature",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("signed.example's findings (-want +got):\n%s", diff)
	}

	// Each server's page says, under its listing, what the catalog found
	// of that entry and of its own signature, and nothing of the other's:
	// from the entry each listing names, and from the catalog's document
	// for listings stored before they named one.
	pages := func(when string) {
		t.Helper()
		for endpoint, want := range map[string][2][]string{
			"https://mcp.signed.example/files": {{"signature_verified", "/entries/1/digest", "entry_digest_mismatch",
				"signature_not_endorsement", `href="/?listing-finding=entry_digest_mismatch"`}, {"/entries/0/"}},
			"https://mcp.signed.example/notes": {{"signature_verified", "/signature", "/entries/0/trustManifests/0/signature"},
				{"entry_digest_mismatch", "/entries/1/"}},
		} {
			status, page := sitePage(t, db, site.ServerPath(store.SiteKey{Kind: store.KindEndpoint, Subject: endpoint}))
			if i := strings.Index(page, `id="listings"`); i >= 0 {
				page = page[i:]
			}
			for _, s := range want[0] {
				if status != http.StatusOK || !strings.Contains(page, s) {
					t.Errorf("%s: the page of %s: %d, its listing lacks %q", when, endpoint, status, s)
				}
			}
			for _, s := range want[1] {
				if strings.Contains(page, s) {
					t.Errorf("%s: the page of %s shows %q, of another entry", when, endpoint, s)
				}
			}
		}
	}
	pages("entries named")
	// The site's index selects by the same codes.
	files := site.ServerPath(store.SiteKey{Kind: store.KindEndpoint, Subject: "https://mcp.signed.example/files"})
	notes := site.ServerPath(store.SiteKey{Kind: store.KindEndpoint, Subject: "https://mcp.signed.example/notes"})
	if status, page := sitePage(t, db, "/?listing-finding=entry_digest_mismatch"); status != http.StatusOK ||
		!strings.Contains(page, files) || strings.Contains(page, notes) || !strings.Contains(page, `name="listing-finding"`) {
		t.Errorf("/?listing-finding=entry_digest_mismatch: %d, lists files %v, notes %v", status,
			strings.Contains(page, files), strings.Contains(page, notes))
	}
	conn, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`UPDATE listings SET entry_index = NULL`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	pages("entries not named")

	// The feed's records carry the same, as codes on each listing; a
	// listing its catalog says nothing of has none.
	code, stdout, stderr = run(t, "", "export", "--db", db, "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	listed := map[string][][]string{}
	for line := range strings.Lines(stdout) {
		var r struct {
			EndpointNormalized string
			ListedBy           []struct{ Findings []string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		for _, l := range r.ListedBy {
			listed[r.EndpointNormalized] = append(listed[r.EndpointNormalized], l.Findings)
		}
	}
	for endpoint, want := range map[string][][]string{
		"https://mcp.signed.example/files": {{"entry_digest_mismatch", "signature_not_endorsement", "signature_verified"}},
		"https://mcp.signed.example/notes": {{"signature_verified"}},
		"https://mcp.inline.example/mcp":   {nil},
	} {
		if diff := cmp.Diff(want, listed[endpoint]); diff != "" {
			t.Errorf("listedBy findings of %s (-want +got):\n%s", endpoint, diff)
		}
	}
	// The CSV has them in one cell, its last.
	code, stdout, stderr = run(t, "", "export", "--db", db, "--format", "csv")
	if code != exitOK {
		t.Fatalf("export csv: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("export csv: %v\n%s", err, stdout)
	}
	cells := map[string]string{}
	for _, row := range rows[1:] {
		cells[row[0]] = row[len(row)-1]
	}
	for endpoint, want := range map[string]string{
		"https://mcp.signed.example/files": "entry_digest_mismatch signature_not_endorsement signature_verified",
		"https://mcp.signed.example/notes": "signature_verified",
		"https://mcp.inline.example/mcp":   "",
	} {
		if got := cells[endpoint]; rows[0][len(rows[0])-1] != "listing_findings" || got != want {
			t.Errorf("csv %s of %s: %q, want %q", rows[0][len(rows[0])-1], endpoint, got, want)
		}
	}

	// --listing-finding keeps the servers a listing of which carries the
	// code, in servers and export alike; a code of the wrong form is a
	// usage error.
	for code, want := range map[string][]string{
		"signature_verified":    {"https://mcp.signed.example/files", "https://mcp.signed.example/notes"},
		"entry_digest_mismatch": {"https://mcp.signed.example/files"},
		"signature_invalid":     nil,
	} {
		for _, args := range [][]string{{"servers", "--json"}, {"export", "--format", "jsonl"}} {
			exit, stdout, stderr := run(t, "", append(args, "--db", db, "--listing-finding", code)...)
			if exit != exitOK {
				t.Fatalf("%s --listing-finding %s: exit %d: %s", args[0], code, exit, stderr)
			}
			var got []string
			if args[0] == "servers" {
				var recs []struct{ EndpointNormalized string }
				if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
					t.Fatalf("servers --json: %v\n%s", err, stdout)
				}
				for _, r := range recs {
					got = append(got, r.EndpointNormalized)
				}
			} else {
				for line := range strings.Lines(stdout) {
					var r struct{ EndpointNormalized string }
					if err := json.Unmarshal([]byte(line), &r); err != nil {
						t.Fatalf("export line %q: %v", line, err)
					}
					got = append(got, r.EndpointNormalized)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s --listing-finding %s (-want +got):\n%s", args[0], code, diff)
			}
		}
	}
	if exit, _, stderr := run(t, "", "servers", "--db", db, "--listing-finding", "Signature"); exit != exitUsage ||
		strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--listing-finding must be a finding code") {
		t.Errorf("servers --listing-finding Signature: exit %d, stderr %q; want a usage error", exit, stderr)
	}

	// crawl --revalidate: a card older rules judged otherwise (as an older
	// build stored it, its record too) is judged again from its stored
	// body, and what servers and export show follows.
	grade := func() string {
		t.Helper()
		exit, stdout, stderr := run(t, "", "servers", "--db", db, "--json")
		if exit != exitOK {
			t.Fatalf("servers: exit %d: %s", exit, stderr)
		}
		var recs []struct{ EndpointNormalized, Grade string }
		if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.EndpointNormalized == "https://mcp.signed.example/files" {
				return r.Grade
			}
		}
		t.Fatal("servers: no https://mcp.signed.example/files")
		return ""
	}
	judged := grade()
	conn, err = sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE cards SET grade = 'old_grade', judged_by = 'servercard/0' WHERE key IN
			(SELECT card_key FROM feed_servers WHERE key = 'https://mcp.signed.example/files')`,
		`UPDATE feed_servers SET grade = 'old_grade' WHERE key = 'https://mcp.signed.example/files'`,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if got := grade(); got != "old_grade" {
		t.Fatalf("the old build's grade: %q", got)
	}
	if exit, stdout, stderr := run(t, "", "crawl", "--db", db, "--revalidate"); exit != exitOK ||
		!strings.Contains(stdout, "re-judged with the current rules: 1 card(s)") {
		t.Fatalf("crawl --revalidate: exit %d: %s%s", exit, stdout, stderr)
	}
	if got := grade(); got != judged {
		t.Errorf("after crawl --revalidate, servers shows grade %q, want %q", got, judged)
	}
}

// sitePage is the status and body of a page of the site that serve would
// show for the database at path.
func sitePage(t *testing.T, path, page string) (int, string) {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(site.Handler(site.Options{Store: st}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + page)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestProbeCommand probes a real go-sdk server and a refused URL the way a
// user would, then reads the saved result back with `probes`.
func TestProbeCommand(t *testing.T) {
	web, ca, dir := fixtureWeb(t, "-- mcp.example.com/mcp --\nSIMWEB-MCP go-sdk-stateful name=live version=2.0.0 tools=2\n"+
		"-- locked.example.com/mcp --\nSIMWEB-MCP auth-required\n")
	db := filepath.Join(dir, "p.db")
	code, stdout, stderr := run(t, "", "probe", "--connect-to", web.ConnectTo(), "--ca-cert", ca, "--db", db, "--save", "--json",
		"https://mcp.example.com/mcp", "https://169.254.169.254/mcp", "https://locked.example.com/mcp")
	if code != exitOK {
		t.Fatalf("probe exit %d: %s", code, stderr)
	}
	var results []struct {
		URL, Outcome, ServerName string
		ToolCount                *int
		Auth                     *struct {
			PointsToOAuthMetadata bool
			ProtectedResource     *struct{ AuthorizationServers []string }
			AuthorizationServer   *struct{ Issuer string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("probe --json: %v\n%s", err, stdout)
	}
	if len(results) != 3 || results[0].Outcome != "ok" || results[0].ServerName != "live" || results[0].ToolCount == nil ||
		*results[0].ToolCount != 2 || results[1].Outcome != "blocked" || results[2].Outcome != "requires_login" {
		t.Fatalf("results = %+v", results)
	}
	// The OAuth metadata the 401 points to is read through the same client.
	if a := results[2].Auth; a == nil || !a.PointsToOAuthMetadata || a.ProtectedResource == nil ||
		len(a.ProtectedResource.AuthorizationServers) == 0 || a.AuthorizationServer == nil || a.AuthorizationServer.Issuer == "" {
		t.Errorf("auth = %+v, want the protected-resource and authorization-server metadata", a)
	}
	code, stdout, _ = run(t, "", "probes", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "https://mcp.example.com/mcp") || !strings.Contains(stdout, "blocked") {
		t.Errorf("probes: exit %d\n%s", code, stdout)
	}
}

// checkDiff compares what diff prints, streaming the cards through the
// matcher, with the whole reconciliation Compute returns: the JSON byte
// for byte as writeJSON writes the Result, the table's counts and rows.
func checkDiff(t *testing.T, db string) {
	t.Helper()
	st, err := store.Open(context.Background(), db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := reconcile.Compute(context.Background(), st, reconcile.Options{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, p := range res.Pairs {
		if len(p.Diffs) == 0 {
			same++
		}
	}
	if len(res.Pairs) == same || same == 0 || len(res.CardOnly) == 0 || len(res.RegistryOnly) == 0 {
		t.Fatalf("the demo's reconciliation: %d pairs (%d alike), %d card-only, %d registry-only; the check wants some of each",
			len(res.Pairs), same, len(res.CardOnly), len(res.RegistryOnly))
	}
	var want bytes.Buffer
	if err := writeJSON(&want, res); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "diff", "--db", db, "--json")
	if code != exitOK {
		t.Fatalf("diff --json: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(want.String(), stdout); diff != "" {
		t.Errorf("diff --json against writeJSON(Compute) (-want +got):\n%s", diff)
	}
	for _, all := range []bool{false, true} {
		args := []string{"diff", "--db", db}
		if all {
			args = append(args, "--all")
		}
		code, stdout, stderr := run(t, "", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		rows := func(header string) int { // the lines after a section's header up to a blank line, less its table's header
			_, after, _ := strings.Cut(stdout, header+"\n")
			block, _, _ := strings.Cut(after, "\n\n")
			n := 0
			for line := range strings.Lines(block) {
				if !strings.HasPrefix(line, "(") {
					n++
				}
			}
			return n - 1
		}
		shown := len(res.Pairs) - same
		if all {
			shown = len(res.Pairs)
		}
		for header, want := range map[string]int{
			fmt.Sprintf("MATCHED (%d)", len(res.Pairs)):              shown,
			fmt.Sprintf("CARD ONLY (%d)", len(res.CardOnly)):         len(res.CardOnly),
			fmt.Sprintf("REGISTRY ONLY (%d)", len(res.RegistryOnly)): len(res.RegistryOnly),
		} {
			if got := rows(header); !strings.Contains(stdout, header) || got != want {
				t.Errorf("%v: %q with %d rows, want %d:\n%s", args, header, got, want, stdout)
			}
		}
		for _, c := range res.CardOnly {
			if !strings.Contains(stdout, c.CardKey) {
				t.Errorf("%v lacks card-only %s", args, c.CardKey)
			}
		}
	}
}
