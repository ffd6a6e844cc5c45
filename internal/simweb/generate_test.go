package simweb

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func decodeCard(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	got := fetch(t, c, url)
	if got.Status != 200 {
		t.Fatalf("GET %s: %d", url, got.Status)
	}
	if err := json.Unmarshal([]byte(got.Body), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// snapshot fetches every document of a small generated web.
func snapshot(t *testing.T, seed int64) ([]string, map[string]reply) {
	t.Helper()
	w := startWeb(t)
	names, err := w.Generate(GenerateOptions{Domains: 30, CatalogShare: 0.5, CardsPerCatalog: 2, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	c := w.Client()
	docs := make(map[string]reply)
	for _, d := range names {
		for _, p := range []string{"/.well-known/ai-catalog.json", "/mcp/0/server-card", "/mcp/1/server-card", "/mcp/2/server-card"} {
			r := fetch(t, c, "https://"+d+p)
			r.Header = http.Header{"Content-Type": r.Header.Values("Content-Type"), "Etag": r.Header.Values("Etag")}
			docs[d+p] = r
		}
	}
	return names, docs
}

func TestGenerateDeterministic(t *testing.T) {
	names1, docs1 := snapshot(t, 42)
	names2, docs2 := snapshot(t, 42)
	if fmt.Sprint(names1) != fmt.Sprint(names2) {
		t.Fatalf("names differ between runs:\n%v\n%v", names1, names2)
	}
	for k, v := range docs1 {
		if fmt.Sprint(v) != fmt.Sprint(docs2[k]) {
			t.Errorf("%s differs between runs", k)
		}
	}
	names3, _ := snapshot(t, 43)
	if names3[0] == names1[0] {
		t.Errorf("seeds 42 and 43 share the name %s", names1[0])
	}

	var catalogs int
	for _, d := range names1 {
		cat := docs1[d+"/.well-known/ai-catalog.json"]
		card := docs1[d+"/mcp/0/server-card"]
		switch cat.Status {
		case 200:
			catalogs++
			if cat.Header.Get("Content-Type") != "application/ai-catalog+json" || !strings.Contains(cat.Body, "https://"+d+"/mcp/1/server-card") {
				t.Errorf("%s catalog: %q %s", d, cat.Header.Get("Content-Type"), cat.Body)
			}
			if card.Status != 200 || !strings.Contains(card.Body, cardSchema) || !strings.Contains(card.Body, "https://gone0."+d+"/mcp") {
				t.Errorf("%s card: %d %s", d, card.Status, card.Body)
			}
			if docs1[d+"/mcp/2/server-card"].Status != 404 {
				t.Errorf("%s: a third card exists", d)
			}
		case 404:
			if card.Status != 404 {
				t.Errorf("%s has a card but no catalog", d)
			}
		default:
			t.Errorf("%s catalog status %d", d, cat.Status)
		}
	}
	if catalogs == 0 || catalogs == len(names1) {
		t.Errorf("%d of %d domains have catalogs; want a share", catalogs, len(names1))
	}
}

func TestGenerateConditionalAndUnknownNames(t *testing.T) {
	w := startWeb(t)
	names, err := w.Generate(GenerateOptions{Domains: 5, CatalogShare: 1, CardsPerCatalog: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := w.Client()
	first := fetch(t, c, "https://"+names[0]+"/.well-known/ai-catalog.json")
	etag := first.Header.Get("Etag")
	if first.Status != 200 || etag == "" || first.Header.Get("Cache-Control") == "" {
		t.Fatalf("first fetch: %d, ETag %q", first.Status, etag)
	}
	if got := fetch(t, c, "https://"+names[0]+"/.well-known/ai-catalog.json", "If-None-Match", etag); got.Status != 304 || got.Body != "" {
		t.Errorf("revalidation: %d %q, want 304", got.Status, got.Body)
	}
	tag := strings.TrimPrefix(names[0], "site0.")
	for _, h := range []string{"site5." + tag, "site01." + tag, "mcp0.site0." + tag, "gone0.site0." + tag, "other.site0." + tag, "site0.g00000000.example"} {
		if got := fetch(t, c, "https://"+h+"/.well-known/ai-catalog.json").Status; got != 404 {
			t.Errorf("%s: status %d, want 404", h, got)
		}
	}
	if _, err := w.Generate(GenerateOptions{Domains: 1, Seed: 1}); err == nil {
		t.Error("generating the same seed twice succeeded")
	}
	for _, bad := range []GenerateOptions{{Domains: -1}, {CatalogShare: 1.5}, {MCPShare: -0.1}} {
		if _, err := w.Generate(bad); err == nil {
			t.Errorf("Generate(%+v) succeeded", bad)
		}
	}
}

// BenchmarkServeGeneratedCatalog measures catalog requests per second over
// TLS keep-alive connections, across many generated host names.
func BenchmarkServeGeneratedCatalog(b *testing.B) {
	w, err := New(Options{DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	names, err := w.Generate(GenerateOptions{Domains: 10_000, CatalogShare: 1, CardsPerCatalog: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	c := w.Client()
	// Reuse a handful of connections: the subject is serving, not handshakes.
	const hosts = 64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			resp, err := c.Get("https://" + names[i%hosts] + "/.well-known/ai-catalog.json")
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
