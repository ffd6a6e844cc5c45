package simweb

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestMCPKindsAnswerInitialize(t *testing.T) {
	archive := `-- sdk.example/mcp --
SIMWEB-MCP go-sdk-stateful name=stateful version=1.2.3
-- json.example/mcp --
SIMWEB-MCP go-sdk-json name=json version=2.0.0
-- stateless.example/mcp --
SIMWEB-MCP go-sdk-stateless name=stateless
-- mcpgo.example/mcp --
SIMWEB-MCP mcp-go-streamable name=mcpgo
`
	w := startWeb(t, archive)
	c := w.Client()
	tests := []struct {
		url, ctype, name, version string
		session                   bool
	}{
		{"https://sdk.example/mcp", "text/event-stream", "stateful", "1.2.3", true},
		{"https://json.example/mcp", "application/json", "json", "2.0.0", true},
		{"https://stateless.example/mcp", "application/json", "stateless", "1.0.0", false},
		{"https://mcpgo.example/mcp", "application/json", "mcpgo", "1.0.0", true},
	}
	for _, tt := range tests {
		resp, rpc := postInitialize(t, c, tt.url)
		if resp.StatusCode != http.StatusOK || rpc == nil || rpc.Result == nil {
			t.Errorf("%s: status %d, response %+v", tt.url, resp.StatusCode, rpc)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
			t.Errorf("%s: Content-Type %q, want %s", tt.url, ct, tt.ctype)
		}
		if got := resp.Header.Get("Mcp-Session-Id") != ""; got != tt.session {
			t.Errorf("%s: session id present = %v, want %v", tt.url, got, tt.session)
		}
		r := rpc.Result
		if string(rpc.ID) != "1" || r.ProtocolVersion != "2025-06-18" || r.ServerInfo.Name != tt.name || r.ServerInfo.Version != tt.version {
			t.Errorf("%s: id %s, result %+v", tt.url, rpc.ID, r)
		}
	}
}

func TestMCPGoSSEAnnouncesEndpoint(t *testing.T) {
	w := startWeb(t, "-- legacy.example/sse --\nSIMWEB-MCP mcp-go-sse name=legacy\n")
	c := w.Client()
	// The probe's first step: POST initialize is refused, which triggers the
	// legacy fallback.
	if resp, _ := postInitialize(t, c, "https://legacy.example/sse"); resp.StatusCode < 400 || resp.StatusCode > 499 {
		t.Errorf("POST initialize: status %d, want 4xx", resp.StatusCode)
	}
	req, err := http.NewRequest(http.MethodGet, "https://legacy.example/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && event == "endpoint" {
			if !strings.HasPrefix(v, "/sse/message?sessionId=") {
				t.Errorf("endpoint = %q, want /sse/message?sessionId=…", v)
			}
			return
		}
	}
	t.Fatalf("stream ended without an endpoint event: %v", sc.Err())
}

func TestGenerateServesMCP(t *testing.T) {
	w := startWeb(t)
	names, err := w.Generate(GenerateOptions{Domains: 40, CatalogShare: 1, CardsPerCatalog: 2, MCPShare: 0.5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	c := w.Client()
	var live, gone int
	for _, d := range names {
		for j := range 2 {
			var card struct {
				Remotes []struct{ URL string } `json:"remotes"`
			}
			decodeCard(t, c, "https://"+d+"/mcp/"+string(rune('0'+j))+"/server-card", &card)
			u := card.Remotes[0].URL
			resp, rpc := postInitialize(t, c, u)
			switch {
			case strings.Contains(u, "://mcp"):
				if resp.StatusCode != 200 || rpc == nil || rpc.Result == nil {
					t.Errorf("%s: status %d", u, resp.StatusCode)
				}
				live++
			default:
				if resp.StatusCode != 404 {
					t.Errorf("%s: status %d, want 404", u, resp.StatusCode)
				}
				gone++
			}
		}
	}
	if live == 0 || gone == 0 {
		t.Errorf("live %d, gone %d: want both", live, gone)
	}
}

func TestDemoMCPServers(t *testing.T) {
	w, _ := startDemo(t)
	c := w.Client()
	for _, u := range []string{
		"https://api.forge-ai.example/mcp",
		"https://mcp.inline.example/mcp",
		"https://tools.oldstyle.example/mcp",
		"https://mcp.sloppy.example/mcp",
	} {
		resp, rpc := postInitialize(t, c, u)
		if resp.StatusCode != 200 || rpc == nil || rpc.Result == nil || rpc.Result.ServerInfo.Name == "" {
			t.Errorf("%s: status %d, response %+v", u, resp.StatusCode, rpc)
		}
	}
	if resp, _ := postInitialize(t, c, "https://mcp.secure.example/mcp"); resp.StatusCode != 401 {
		t.Errorf("secure: status %d, want 401", resp.StatusCode)
	}
	if resp, _ := postInitialize(t, c, "https://sse.acme.example/sse"); resp.StatusCode != 405 {
		t.Errorf("legacy SSE POST: status %d, want 405", resp.StatusCode)
	}
}

// BenchmarkInitialize1000Endpoints posts initialize to 1,000 generated MCP
// endpoints (each a distinct host name, so a distinct TLS session) with 32
// workers: the load a probe run puts on the simulated web.
func BenchmarkInitialize1000Endpoints(b *testing.B) {
	w, err := New(Options{DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	names, err := w.Generate(GenerateOptions{Domains: 500, CatalogShare: 1, CardsPerCatalog: 2, MCPShare: 1, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var urls []string
	for _, d := range names {
		urls = append(urls, "https://mcp0."+d+"/mcp", "https://mcp1."+d+"/mcp")
	}
	b.ResetTimer()
	for range b.N {
		c := w.Client() // fresh connections each round, as a probe run has
		jobs := make(chan string)
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for u := range jobs {
					req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(initializeBody))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := c.Do(req)
					if err != nil {
						b.Error(err)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("%s: %d", u, resp.StatusCode)
					}
				}
			})
		}
		for _, u := range urls {
			jobs <- u
		}
		close(jobs)
		wg.Wait()
		c.CloseIdleConnections()
	}
	b.ReportMetric(float64(b.N*len(urls))/b.Elapsed().Seconds(), "endpoints/s")
}
