package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cardcrawl/cardcrawl/store"
)

// seedDB writes a small cardcrawl database: n domains, one of them with a
// card and a remote.
func seedDB(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("d%05d.example", i))
	}
	if _, err := db.Enqueue(ctx, names, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r := store.DomainResult{Domain: names[0], Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: "https://" + names[0] + "/.well-known/ai-catalog.json", Capped: []string{store.CapRemotes}}
	card := store.CardRecord{Key: "https://" + names[0] + "/card", SHA256: "h", Name: "com.example/x", Version: "1.0.0",
		Grade: "conformant", JSON: []byte(`{"name":"com.example/x","version":"1.0.0"}`)}
	r.Cards = []store.CardRecord{card}
	u := "https://mcp.example.com/mcp"
	r.Remotes = []store.RemoteRecord{{URLNorm: u, URL: u, Type: "streamable-http", CardKey: card.Key, JSON: []byte(`{}`)}}
	r.Listings = []store.ListingRecord{{CatalogURL: r.CatalogURL, Identifier: "x", CardKey: card.Key, RemoteNorm: u}}
	if err := db.SaveDomain(ctx, r); err != nil {
		t.Fatal(err)
	}
}

func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// readCommands are the commands that only read the database.
var readCommands = [][]string{
	{"domains"}, {"domains", "--json"}, {"servers"}, {"servers", "--json"}, {"export", "--format", "jsonl"},
	{"export", "--format", "json"}, {"probes"}, {"diff"}, {"namespaces"}, {"registry", "entries"},
}

// TestReadCommandsOnReadOnlyFile: every read command works on a database
// file it may not write, and leaves it byte for byte as it was.
func TestReadCommandsOnReadOnlyFile(t *testing.T) {
	if rerunUnprivileged(t) {
		return
	}
	path := filepath.Join(t.TempDir(), "ro.db")
	seedDB(t, path, 3)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before := hashFile(t, path)
	for _, args := range readCommands {
		code, _, stderr := run(t, "", append(args, "--db", path)...)
		if code != exitOK {
			t.Errorf("%s on a read-only file: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	if hashFile(t, path) != before {
		t.Error("a read command changed the database file")
	}

	// serve too: it answers from the read-only file until stopped.
	addr, stop := serveDB(t, path)
	resp, err := http.Get(addr + "feed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("mcp.example.com")) {
		t.Errorf("serve on a read-only file: %d %s", resp.StatusCode, body)
	}
	stop()
	if hashFile(t, path) != before {
		t.Error("serve changed the database file")
	}
}

// serveDB runs serve on db in-process and returns its base URL (ending in
// "/") once it listens; stop ends it and checks it exited 0.
func serveDB(t *testing.T, db string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := &lineWatch{want: "serving ", seen: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, &env{stdout: io.Discard, stderr: listening, stdin: strings.NewReader("")},
			[]string{"serve", "--db", db, "--addr", "127.0.0.1:0"})
	}()
	select {
	case line := <-listening.seen:
		base = strings.TrimSpace(line[strings.LastIndex(line, "http://"):])
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d before listening: %s", code, listening.String())
	}
	return base, func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exit %d", code)
		}
	}
}

// lineWatch is a stderr that reports the first line containing want.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan string
	sent bool
}

func (l *lineWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.sent {
		for _, line := range strings.Split(l.buf.String(), "\n") {
			if strings.Contains(line, l.want) && strings.Contains(line, "http://") {
				l.sent = true
				l.seen <- line
				break
			}
		}
	}
	return len(p), nil
}

func (l *lineWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestForeignDatabaseRefused: pointed at a SQLite file that is not
// cardcrawl's, every command says so in one line, exits 2, and leaves the
// file untouched (no tables added, journal mode not switched).
func TestForeignDatabaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	other.Close()
	before := hashFile(t, path)
	cmds := append([][]string{
		{"crawl", "--probe", "never", "nothing.example"},
		{"registry", "sync", "--from-file", "-"},
		{"namespaces", "--check"},
	}, readCommands...)
	for _, args := range cmds {
		code, stdout, stderr := run(t, `{"servers":[]}`, append(args, "--db", path)...)
		name := strings.Join(args, " ")
		if code != exitUsage || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing", name, code, stdout)
		}
		if !strings.Contains(stderr, "not a cardcrawl database") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: stderr %q, want one line saying it is not a cardcrawl database", name, stderr)
		}
	}
	if hashFile(t, path) != before {
		t.Error("the foreign file changed")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("the foreign file was switched to WAL")
	}
}

// TestReadCommandNeedsUpgrade: a read command on a database a newer build
// must migrate says to run a write command first, and changes nothing.
func TestReadCommandNeedsUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	seedDB(t, path, 1)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := hashFile(t, path)
	code, _, stderr := run(t, "", "domains", "--db", path)
	if code != exitUsage || !strings.Contains(stderr, "run a write command") {
		t.Errorf("domains on an older database: exit %d, %q", code, stderr)
	}
	if hashFile(t, path) != before {
		t.Error("the read command changed the database")
	}
}

// TestDomainsStreamMatchesWholeJSON: the streamed --json array is
// byte for byte what encoding the whole list would give, past the
// store's page size, and for an empty database.
func TestDomainsStreamMatchesWholeJSON(t *testing.T) {
	for _, n := range []int{0, 1, 1234} {
		path := filepath.Join(t.TempDir(), "d.db")
		if n > 0 {
			seedDB(t, path, n)
		} else {
			db, err := store.Open(context.Background(), path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
		}
		code, stdout, stderr := run(t, "", "domains", "--json", "--db", path)
		if code != exitOK {
			t.Fatalf("domains --json: exit %d: %s", code, stderr)
		}
		db, err := store.Open(context.Background(), path, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Domains(context.Background())
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := writeJSON(&want, nonNilSlice(rows)); err != nil {
			t.Fatal(err)
		}
		if stdout != want.String() {
			t.Errorf("%d domains: streamed JSON differs from the whole list's:\n%.300s\nwant\n%.300s", n, stdout, want.String())
		}
	}
}
