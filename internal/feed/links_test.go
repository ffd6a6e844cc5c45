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
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// hostileLinkCard is graded by the real validator, so its findings are the
// ones a crawl stores.
func hostileLinkCard(t *testing.T, key, website, repo, icon string) store.CardRow {
	t.Helper()
	doc, _ := json.Marshal(map[string]any{
		"$schema": servercard.SchemaURL, "name": "com.example/links", "version": "1.0.0", "description": "d",
		"websiteUrl": website, "repository": map[string]string{"url": repo, "source": "github"},
		"icons": []map[string]string{{"src": icon}, {"src": "https://example.com/ok.png"}},
		"remotes": []map[string]string{{"type": "streamable-http", "url": "https://mcp.links.example/mcp"},
			{"type": "streamable-http", "url": "javascript:alert(1)"}},
	})
	v, err := servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	res := v.Check(doc)
	cardJSON, _ := json.Marshal(res.Card)
	// Inline, so the AI Catalog republishes the card itself as data.
	return store.CardRow{Key: key, Inline: true, SHA256: "dd",
		Name: res.Card.Name, Version: res.Card.Version, Description: res.Card.Description, WebsiteURL: res.Card.WebsiteURL,
		Grade: string(res.Grade), Findings: res.Findings, JSON: string(cardJSON),
		FirstSeen: "2026-11-01T00:00:00Z", LastSeen: "2026-11-01T00:00:00Z"}
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
	var servers []store.Server
	for i, l := range [][3]string{
		{"javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "javascript:alert(2)"},
		{"JaVaScRiPt:alert(1)", "VBScript:msgbox(1)", "data:image/svg+xml;base64,PHN2Zy8+"},
		{" javascript:alert(1)", "\tdata:text/html,x", "java\tscript:alert(1)"},
		{"vbscript:msgbox(1)", "javascript://github.com/%0aalert(1)", "http://example.com/plain.png"},
	} {
		c := hostileLinkCard(t, "https://links.example/.well-known/ai-catalog.json#/entries/"+strconv.Itoa(i)+"/data", l[0], l[1], l[2])
		if c.Grade == string(servercard.Conformant) {
			t.Errorf("card with links %q is graded conformant", l)
		}
		if !c.Findings.Has(servercard.CodeURLSchemeNotAllowed) {
			t.Errorf("card with links %q has no %s finding: %s", l, servercard.CodeURLSchemeNotAllowed, c.Findings)
		}
		servers = append(servers, store.Server{EndpointNorm: "https://mcp.links.example/mcp", Endpoint: "https://mcp.links.example/mcp",
			Transport: "streamable-http", Card: c, Listings: []store.Listing{{Domain: "links.example", CatalogURL: "https://links.example/.well-known/ai-catalog.json", Identifier: "urn:air:links.example:mcp:" + strconv.Itoa(i)}}})
	}
	recs := feed.Records(servers)
	for _, r := range recs {
		if !slicesContains(r.Findings, servercard.CodeURLSchemeNotAllowed) {
			t.Errorf("record lost the finding: %v", r.Findings)
		}
	}
	outputs := map[string]string{}
	for _, f := range feed.Formats {
		var buf bytes.Buffer
		if err := feed.Write(&buf, f, recs); err != nil {
			t.Fatal(err)
		}
		outputs[f] = buf.String()
	}
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Source: func(context.Context) ([]feed.Record, error) { return recs, nil }}))
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
