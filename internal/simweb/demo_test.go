package simweb

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func startDemo(t *testing.T) (*Web, []string) {
	t.Helper()
	w, domains, err := Demo(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, domains
}

func TestDemoCatalogs(t *testing.T) {
	w, domains := startDemo(t)
	c := freshClient(w)
	want := map[string]int{
		"forge.example": 200, "inline.example": 200, "acme.example": 200, "oldstyle.example": 200,
		"secure.example": 200, "tenants.example": 200, "risky.example": 200, "sloppy.example": 200,
		"moved.example": 301, "flaky.example": 200, "soft404.example": 200, "notacatalog.example": 200,
		"broken.example": 500, "nocatalog.example": 404, "huge.example": 200, "signed.example": 200,
	}
	if len(domains) != len(want) {
		t.Errorf("Demo lists %d domains, want %d: %v", len(domains), len(want), domains)
	}
	for _, d := range domains {
		status, ok := want[d]
		if !ok {
			t.Errorf("unexpected demo domain %s", d)
			continue
		}
		url := "https://" + d + "/.well-known/ai-catalog.json"
		if d == "flaky.example" {
			if resp, err := c.Get(url); err == nil {
				_ = resp.Body.Close()
				t.Errorf("flaky.example answered the first request")
			}
		}
		got := fetch(t, c, url, "Accept", "application/ai-catalog+json, application/json;q=0.5")
		if got.Status != status {
			t.Errorf("%s: status %d, want %d", d, got.Status, status)
		}
		isJSON := strings.Contains(got.Header.Get("Content-Type"), "json")
		if status == 200 && isJSON && !json.Valid([]byte(got.Body)) {
			t.Errorf("%s: catalog is not valid JSON", d)
		}
		if d == "huge.example" && len(got.Body) < 2<<20 {
			t.Errorf("huge.example: %d bytes, want at least 2 MiB", len(got.Body))
		}
	}
	card := "https://api.forge-ai.example/mcp/server-card"
	if got := fetch(t, c, card, "Accept", "application/json").Status; got != http.StatusNotAcceptable {
		t.Errorf("forge card with Accept application/json: %d, want 406", got)
	}
	if got := fetch(t, c, card, "Accept", "application/mcp-server-card+json").Status; got != 200 {
		t.Errorf("forge card with the card media type: %d, want 200", got)
	}
	if got := fetch(t, c, "https://acme.example/catalogs/engineering.json").Status; got != 200 {
		t.Errorf("nested catalog: %d, want 200", got)
	}
}

// TestDemoFixturesAreValidJSON guards the hand-written fixtures against typos
// that would make the demo tell the wrong story.
func TestDemoFixturesAreValidJSON(t *testing.T) {
	w, _, err := Demo(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for host, s := range w.sites {
		for p, res := range s.files {
			if strings.Contains(res.header.Get("Content-Type"), "json") && !strings.Contains(host, "notacatalog") {
				n++
				if !json.Valid(res.body) {
					t.Errorf("%s%s: invalid JSON", host, p)
				}
			}
		}
	}
	if n < 15 {
		t.Errorf("only %d JSON documents in the demo", n)
	}
}
