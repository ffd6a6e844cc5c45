package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// hostileLinkCard is graded by the real validator, so its findings are the
// ones a crawl stores.
func hostileLinkCard(t *testing.T, key, website, repo, icon, endpoint string) feedtest.Card {
	t.Helper()
	doc, _ := json.Marshal(map[string]any{
		"$schema": servercard.SchemaURL, "name": "com.example/links", "version": "1.0.0", "description": "d",
		"websiteUrl": website, "repository": map[string]string{"url": repo, "source": "github"},
		"icons": []map[string]string{{"src": icon}, {"src": "https://example.com/ok.png"}},
		"remotes": []map[string]string{{"type": "streamable-http", "url": endpoint},
			{"type": "streamable-http", "url": "javascript:alert(1)"}},
	})
	v, err := servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	res := v.Check(doc)
	cardJSON, _ := json.Marshal(res.Card)
	findings, _ := json.Marshal(res.Findings)
	// Inline, so the AI Catalog republishes the card itself as data.
	return feedtest.Card{Key: key, Inline: true, Name: res.Card.Name, Version: res.Card.Version,
		Description: res.Card.Description, WebsiteURL: res.Card.WebsiteURL, Grade: string(res.Grade),
		Findings: string(findings), JSON: string(cardJSON), Remotes: []string{endpoint}}
}

// browserView is what a browser makes of text before reading a scheme: no
// white space or control characters, any case.
func browserView(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s))
}

// TestFeedNeverRepublishesNonWebLinks: javascript:, data: and vbscript:
// links, in every spelling, stay out of every feed format and the page;
// the card keeps its finding and cannot be conformant.
func TestFeedNeverRepublishesNonWebLinks(t *testing.T) {
	var cards []feedtest.Card
	for i, l := range [][3]string{
		{"javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "javascript:alert(2)"},
		{"JaVaScRiPt:alert(1)", "VBScript:msgbox(1)", "data:image/svg+xml;base64,PHN2Zy8+"},
		{" javascript:alert(1)", "\tdata:text/html,x", "java\tscript:alert(1)"},
		{"vbscript:msgbox(1)", "javascript://github.com/%0aalert(1)", "http://example.com/plain.png"},
	} {
		c := hostileLinkCard(t, "https://links.example/.well-known/ai-catalog.json#/entries/"+strconv.Itoa(i)+"/data", l[0], l[1], l[2],
			"https://mcp.links.example/mcp"+strconv.Itoa(i))
		if c.Grade == string(servercard.Conformant) {
			t.Errorf("card with links %q is graded conformant", l)
		}
		if !strings.Contains(c.Findings, servercard.CodeURLSchemeNotAllowed) {
			t.Errorf("card with links %q has no %s finding: %s", l, servercard.CodeURLSchemeNotAllowed, c.Findings)
		}
		cards = append(cards, c)
	}
	db, _ := filledStore(t, 0)
	ctx := context.Background()
	// One domain per card, so each card describes an entry of its own.
	for i, c := range cards {
		if err := feedtest.Save(ctx, db, 1, "links"+strconv.Itoa(i)+".example", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.EachFeedServer(ctx, store.FeedQuery{}, func(s *store.FeedServer) error {
		if r := feed.NewRecord(s); !slicesContains(r.Findings, servercard.CodeURLSchemeNotAllowed) {
			t.Errorf("record lost the finding: %v", r.Findings)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	for _, f := range feed.FormatNames() {
		var buf bytes.Buffer
		if err := feed.Write(ctx, &buf, f, db, feed.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		outputs[f] = buf.String()
	}
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: db}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	outputs["page"] = string(page)
	// JSON escapes (\t, \u003c) would hide a scheme from the check.
	for _, f := range []string{"json", "jsonl", "ai-catalog"} {
		outputs[f] = strings.NewReplacer(`\t`, "", `\n`, "", `\u0009`, "").Replace(outputs[f])
	}
	for name, out := range outputs {
		seen := browserView(out)
		for _, bad := range []string{"javascript:", "vbscript:", "data:"} {
			if strings.Contains(seen, bad) {
				t.Errorf("%s republishes a %s link:\n%s", name, bad, out)
			}
		}
	}
	for _, f := range []string{"json", "ai-catalog"} {
		if !strings.Contains(outputs[f], "https://example.com/ok.png") || !strings.Contains(outputs[f], "https://mcp.links.example/mcp") {
			t.Errorf("%s lost the https icon or remote:\n%s", f, outputs[f])
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRegistryOnlyEntryLinks: the Registry's own server.json, republished
// for servers only the Registry declares, loses the same links a card
// would: it is someone else's document, and the Registry's checks at
// publish time are not this feed's guarantee.
func TestRegistryOnlyEntryLinks(t *testing.T) {
	e := &store.FeedEntry{Registry: &store.FeedEntryRegistry{Source: "https://registry.example", Name: "com.example/r",
		Version: "1.0.0", ServerJSON: `{"name":"com.example/r","version":"1.0.0","description":"d",
		"websiteUrl":"javascript:alert(1)","repository":{"url":"file:///etc/passwd","source":"github"},
		"icons":[{"src":"http://example.com/i.png"},{"src":"https://example.com/ok.png"}],
		"remotes":[{"type":"streamable-http","url":"https://mcp.example.com/mcp"},{"type":"sse","url":"data:text/html,x"}]}`},
		Records: []store.FeedServer{{EndpointNorm: "https://mcp.example.com/mcp", Endpoint: "https://mcp.example.com/mcp"}}}
	entry, ok := feed.NewRegistryEntry(e, false)
	if !ok {
		t.Fatal("no entry")
	}
	srv := entry.Server
	if srv.WebsiteURL != "" || srv.Repository != nil || len(srv.Icons) != 1 || len(srv.Remotes) != 1 ||
		srv.Remotes[0].URL != "https://mcp.example.com/mcp" {
		t.Errorf("unsafe links kept: %+v", srv)
	}
	if d := entry.Meta.Discovery; len(d.Sources) != 1 || d.Sources[0] != "registry" || d.Registry != "https://registry.example" ||
		len(d.Endpoints) != 1 {
		t.Errorf("discovery: %+v", d)
	}
}
