package discover_test

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
)

// TestEntryDigests: an entry's digest is checked against the exact bytes
// served (by url) or the inline data's canonical JSON form; a mismatch is
// an error on the catalog at the digest's path, the document is still
// read and listed, and data with no canonical form says it could not be
// checked. Each listing keeps the codes of what its own catalog found of
// its entry: not another entry's, not the inline card's own, not a parent
// catalog's.
func TestEntryDigests(t *testing.T) {
	card := func(name string) string {
		return fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"example.digest/%s","version":"1.0.0","description":"%s","remotes":[{"type":"streamable-http","url":"https://mcp.digest.example/%s"}]}`+"\n", name, name, name)
	}
	sha := func(b string) string { s := sha256.Sum256([]byte(b)); return "sha256:" + hex.EncodeToString(s[:]) }
	sha384 := func(b string) string { s := sha512.Sum384([]byte(b)); return "sha384:" + hex.EncodeToString(s[:]) }
	a, b, c, nf := card("a"), card("b"), card("c"), card("f")
	nested := `{"specVersion":"1.0","entries":[{"identifier":"f","type":"application/mcp-server-card+json","url":"cards/f"}]}` + "\n"
	// Inline data as written (spaced, members out of order) and its
	// canonical form, which is what its digest covers.
	inline := `{ "version": "1.0.0", "name": "example.digest/d", "description": "d",
		"remotes": [ { "url": "https://mcp.digest.example/d", "type": "streamable-http" } ],
		"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json" }`
	canonical := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","description":"d","name":"example.digest/d","remotes":[{"type":"streamable-http","url":"https://mcp.digest.example/d"}],"version":"1.0.0"}`
	dup := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"example.digest/e","name":"example.digest/e","version":"1.0.0","description":"e"}`
	const ty = `"type":"application/mcp-server-card+json"`
	entries := []string{
		`{"identifier":"a",` + ty + `,"url":"https://cards.digest.example/a","digest":"` + sha(a) + `"}`,
		`{"identifier":"b",` + ty + `,"url":"https://cards.digest.example/b","digest":"` + sha(a) + `"}`, // a's digest on b
		`{"identifier":"c",` + ty + `,"url":"https://cards.digest.example/c","digest":"` + sha384(c) + `"}`,
		`{"identifier":"d",` + ty + `,"data":` + inline + `,"digest":"` + sha(canonical) + `"}`,
		`{"identifier":"d2",` + ty + `,"data":` + inline + `,"digest":"` + sha(inline) + `"}`, // the bytes as written are not what is hashed
		`{"identifier":"e",` + ty + `,"data":` + dup + `,"digest":"` + sha(dup) + `"}`,
		`{"identifier":"n","type":"application/ai-catalog+json","url":"https://digest.example/nested.json","digest":"` + sha(nested+" ") + `"}`,
	}
	archive := "-- digest.example/.well-known/ai-catalog.json --\n" +
		`{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + "]}\n" +
		"-- digest.example/nested.json --\n" + nested + "-- digest.example/cards/f --\n" + nf +
		"-- cards.digest.example/a --\n" + a + "-- cards.digest.example/b --\n" + b + "-- cards.digest.example/c --\n" + c
	w := newWorld(t, []byte(archive))
	w.crawl(context.Background(), w.options(), "digest.example")

	fs := w.catalogFindings("https://digest.example/.well-known/ai-catalog.json")
	type f struct{ Severity, Code, Path string }
	var got []f
	for _, x := range fs {
		if strings.HasPrefix(x.Code, "entry_digest") {
			got = append(got, f{x.Severity, x.Code, x.Path})
		}
	}
	want := []f{
		{"error", discover.CodeDigestMismatch, "/entries/1/digest"},
		{"error", discover.CodeDigestMismatch, "/entries/4/digest"},
		{"warning", discover.CodeDigestUnverifiable, "/entries/5/digest"},
		{"error", discover.CodeDigestMismatch, "/entries/6/digest"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("digest findings (-want +got):\n%s\nall: %+v", diff, fs)
	}
	// Checked, not refused: every card is stored and listed.
	var cards int
	if err := w.store.SQL().QueryRow(`SELECT count(DISTINCT card_key) FROM listings WHERE domain = 'digest.example' AND active = TRUE`).Scan(&cards); err != nil {
		t.Fatal(err)
	}
	if cards != 7 {
		t.Errorf("%d cards listed, want 7", cards)
	}
	codes := w.pairs(`SELECT identifier, entry_codes FROM listings WHERE domain = 'digest.example' AND active = TRUE`)
	wantCodes := map[string]string{"a": "", "b": discover.CodeDigestMismatch, "c": "", "d": "",
		"d2": discover.CodeDigestMismatch, "e": discover.CodeDigestUnverifiable, "f": "entry_url_relative"}
	if diff := cmp.Diff(wantCodes, codes); diff != "" {
		t.Errorf("listings' codes (-want +got):\n%s", diff)
	}
}
