package simweb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testArchive = `Fixtures for the simweb tests.
-- example.com/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
-- example.org/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"x","type":"application/mcp-server-card+json","url":"https://cards.example.net/card"}]}
-- Cards.Example.NET/card --
HTTP 200
Content-Type: application/mcp-server-card+json
ETag: "v1"
Last-Modified: Tue, 01 Sep 2026 10:00:00 GMT
Cache-Control: max-age=3600
Simweb-Require-Accept: application/mcp-server-card+json

{"name":"card"}
-- moved.example/.well-known/ai-catalog.json --
HTTP 301
Location: https://www.moved.example/catalog.json

-- broken.example/.well-known/ai-catalog.json --
HTTP 500
Content-Type: text/plain

boom
-- soft404.example/.well-known/ai-catalog.json --
HTTP 200
Content-Type: text/html; charset=utf-8

<html>Page not found</html>
-- query.example/search?q=1 --
one
-- query.example/search --
plain
`

const behaviourArchive = `-- b.example/drop --
HTTP 200
Simweb-Behavior: drop

never
-- b.example/drop-once --
HTTP 200
Simweb-Behavior: drop-once

second time lucky
-- b.example/drop-twice --
HTTP 200
Simweb-Behavior: drop-twice

third time lucky
-- b.example/stall.json --
HTTP 200
Simweb-Behavior: stall

0123456789abcdefghij
-- b.example/hang --
HTTP 200
Simweb-Behavior: hang

never
-- b.example/big.json --
HTTP 200
Simweb-Pad: 4096

{}
`

func startWeb(t *testing.T, archives ...string) *Web {
	t.Helper()
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		if err := w.AddFixtures([]byte(a)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

type reply struct {
	Status int
	Header http.Header
	Body   string
}

func fetch(t *testing.T, c *http.Client, url string, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// userClient is what a user's tool builds from --connect-to and --ca-cert:
// it reads the CA from the PEM file and dials the address after "::".
func userClient(t *testing.T, w *Web) *http.Client {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := w.WriteCA(caFile); err != nil {
		t.Fatal(err)
	}
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("CA file holds no certificate")
	}
	target, ok := strings.CutPrefix(w.ConnectTo(), "::")
	if !ok {
		t.Fatalf("ConnectTo() = %q, want ::HOST:PORT", w.ConnectTo())
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, target)
			},
			TLSClientConfig: &tls.Config{RootCAs: pool},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func TestRoutingByHost(t *testing.T) {
	w := startWeb(t, testArchive)
	c := userClient(t, w)
	card := "application/mcp-server-card+json"
	tests := []struct {
		url    string
		hdr    []string
		status int
		ctype  string
		body   string
	}{
		{"https://example.com/.well-known/ai-catalog.json", nil, 200, "application/json", `{"specVersion":"1.0","entries":[]}` + "\n"},
		{"https://EXAMPLE.org:8443/.well-known/ai-catalog.json", nil, 200, "application/json", ""},
		{"https://cards.example.net/card", []string{"Accept", card}, 200, card, `{"name":"card"}` + "\n"},
		{"https://moved.example/.well-known/ai-catalog.json", nil, 301, "", ""},
		{"https://broken.example/.well-known/ai-catalog.json", nil, 500, "text/plain", "boom\n"},
		{"https://soft404.example/.well-known/ai-catalog.json", nil, 200, "text/html; charset=utf-8", "<html>Page not found</html>\n"},
		{"https://example.com/nothing-here", nil, 404, "text/plain", "not found\n"},
		{"https://unknown.example/.well-known/ai-catalog.json", nil, 404, "text/plain", "not found\n"},
		{"https://query.example/search?q=1", nil, 200, "text/plain", "one\n"},
		{"https://query.example/search?q=2", nil, 200, "text/plain", "plain\n"},
	}
	for _, tt := range tests {
		got := fetch(t, c, tt.url, tt.hdr...)
		if got.Status != tt.status || got.Header.Get("Content-Type") != tt.ctype || (tt.body != "" && got.Body != tt.body) {
			t.Errorf("GET %s = %d %q %q; want %d %q %q", tt.url, got.Status, got.Header.Get("Content-Type"), got.Body, tt.status, tt.ctype, tt.body)
		}
	}
	if got := fetch(t, c, "https://moved.example/.well-known/ai-catalog.json").Header.Get("Location"); got != "https://www.moved.example/catalog.json" {
		t.Errorf("Location = %q", got)
	}
}

func TestCertificatePerName(t *testing.T) {
	w := startWeb(t, testArchive)
	// Clients send no SNI for IP literals, so only loopback IPs (the no-SNI
	// certificate) can verify.
	for _, name := range []string{"example.com", "cards.example.net", "never-configured.example", "127.0.0.1"} {
		conn, err := tls.Dial("tcp", w.Addr(), &tls.Config{ServerName: name, RootCAs: w.CertPool()})
		if err != nil {
			t.Errorf("TLS to %s: %v", name, err)
			continue
		}
		leaf := conn.ConnectionState().PeerCertificates[0]
		if err := leaf.VerifyHostname(name); err != nil {
			t.Errorf("leaf for %s: %v", name, err)
		}
		_ = conn.Close()
	}
	// A leaf must not be valid for another name, and the CA must be needed.
	conn, err := tls.Dial("tcp", w.Addr(), &tls.Config{ServerName: "example.com", RootCAs: x509.NewCertPool()})
	if err == nil {
		_ = conn.Close()
		t.Error("handshake succeeded without trusting the CA")
	}
	other, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err = tls.Dial("tcp", w.Addr(), &tls.Config{ServerName: "example.com", RootCAs: other.CertPool()})
	if err == nil {
		_ = conn.Close()
		t.Error("handshake succeeded with another Web's CA")
	}
}

func TestRequireAccept(t *testing.T) {
	w := startWeb(t, testArchive)
	c := w.Client()
	for _, tt := range []struct {
		accept string
		status int
	}{
		{"", 406},
		{"application/json", 406},
		{"application/mcp-server-card+json, application/json;q=0.5", 200},
	} {
		if got := fetch(t, c, "https://cards.example.net/card", "Accept", tt.accept).Status; got != tt.status {
			t.Errorf("Accept %q: status %d, want %d", tt.accept, got, tt.status)
		}
	}
}

func TestConditional(t *testing.T) {
	w := startWeb(t, testArchive)
	c := w.Client()
	const a = "application/mcp-server-card+json"
	tests := []struct {
		name   string
		hdr    []string
		status int
	}{
		{"etag match", []string{"If-None-Match", `"v1"`}, 304},
		{"etag in list, weak", []string{"If-None-Match", `"v0", W/"v1"`}, 304},
		{"etag mismatch", []string{"If-None-Match", `"v2"`}, 200},
		{"etag mismatch wins over date", []string{"If-None-Match", `"v2"`, "If-Modified-Since", "Wed, 02 Sep 2026 10:00:00 GMT"}, 200},
		{"same date", []string{"If-Modified-Since", "Tue, 01 Sep 2026 10:00:00 GMT"}, 304},
		{"later date", []string{"If-Modified-Since", "Wed, 02 Sep 2026 10:00:00 GMT"}, 304},
		{"earlier date", []string{"If-Modified-Since", "Mon, 31 Aug 2026 10:00:00 GMT"}, 200},
	}
	for _, tt := range tests {
		got := fetch(t, c, "https://cards.example.net/card", append([]string{"Accept", a}, tt.hdr...)...)
		if got.Status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, got.Status, tt.status)
		}
		if got.Status == 304 && (got.Body != "" || got.Header.Get("Etag") != `"v1"`) {
			t.Errorf("%s: 304 with body %q, ETag %q", tt.name, got.Body, got.Header.Get("Etag"))
		}
	}
	// A file without validators never answers 304.
	if got := fetch(t, c, "https://example.com/.well-known/ai-catalog.json", "If-None-Match", "*").Status; got != 200 {
		t.Errorf("no ETag, If-None-Match *: status %d, want 200", got)
	}
}

// freshClient opens a new connection per request and never retries, so each
// scripted drop is seen by the caller.
func freshClient(w *Web) *http.Client {
	c := w.Client()
	c.Transport.(*http.Transport).DisableKeepAlives = true
	return c
}

func TestDropBehaviours(t *testing.T) {
	w := startWeb(t, behaviourArchive)
	c := freshClient(w)
	tests := []struct {
		path string
		want []bool // per attempt: true = response, false = error
	}{
		{"/drop", []bool{false, false, false}},
		{"/drop-once", []bool{false, true, true}},
		{"/drop-twice", []bool{false, false, true}},
	}
	for _, tt := range tests {
		var got []bool
		for range tt.want {
			resp, err := c.Get("https://b.example" + tt.path)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			got = append(got, err == nil)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestPad(t *testing.T) {
	w := startWeb(t, behaviourArchive)
	got := fetch(t, w.Client(), "https://b.example/big.json")
	if len(got.Body) != 4096 || !strings.HasPrefix(got.Body, "{}\n ") || strings.TrimSpace(got.Body) != "{}" {
		t.Errorf("padded body: %d bytes, starts %q", len(got.Body), got.Body[:min(8, len(got.Body))])
	}
}

func TestStallSendsHalfThenBlocksUntilClose(t *testing.T) {
	w := startWeb(t, behaviourArchive)
	resp, err := w.Client().Get("https://b.example/stall.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 21 {
		t.Fatalf("status %d, length %d; want 200, 21", resp.StatusCode, resp.ContentLength)
	}
	half := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, half); err != nil || string(half) != "0123456789" {
		t.Fatalf("first half = %q, %v", half, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("stalled body completed with %q; want an error after Close", rest)
	}
}

func TestHangBlocksUntilClose(t *testing.T) {
	neverAnswers(t, startWeb(t, behaviourArchive), http.MethodGet, "https://b.example/hang")
}

func TestRequestsAndMaxConcurrent(t *testing.T) {
	const n = 4
	w := startWeb(t, testArchive)
	var (
		mu       sync.Mutex
		arrived  int
		released = make(chan struct{})
	)
	w.Handle("busy.example:443", http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		arrived++
		if arrived == n {
			close(released)
		}
		mu.Unlock()
		<-released
		_, _ = io.WriteString(rw, "ok")
	}))
	c := w.Client()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := c.Get("https://busy.example/x")
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	fetch(t, c, "https://example.com/.well-known/ai-catalog.json",
		"Accept", "application/ai-catalog+json", "User-Agent", "cardcrawl-test/1", "If-None-Match", `"x"`,
		"If-Modified-Since", "Tue, 01 Sep 2026 10:00:00 GMT", "Cookie", "a=b", "Authorization", "Bearer t")

	if got := w.MaxConcurrent("busy.example"); got != n {
		t.Errorf("MaxConcurrent(busy.example) = %d, want %d", got, n)
	}
	if got := w.MaxConcurrent("example.com"); got != 1 {
		t.Errorf("MaxConcurrent(example.com) = %d, want 1", got)
	}
	if got := w.MaxConcurrent(""); got < n {
		t.Errorf("MaxConcurrent(\"\") = %d, want >= %d", got, n)
	}
	if got := len(w.Requests("busy.example")); got != n {
		t.Errorf("len(Requests(busy.example)) = %d, want %d", got, n)
	}
	want := []Request{{
		Host: "example.com", Method: "GET", Path: "/.well-known/ai-catalog.json", Accept: "application/ai-catalog+json",
		IfNoneMatch: `"x"`, IfModifiedSince: "Tue, 01 Sep 2026 10:00:00 GMT", UserAgent: "cardcrawl-test/1",
		Cookie: "a=b", Authorization: "Bearer t",
	}}
	got := w.Requests("EXAMPLE.com")
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Request{}, "At")); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
	if got[0].At.IsZero() {
		t.Error("Request.At is zero")
	}
	if all := w.Requests(""); len(all) != n+1 || all[n].Host != "example.com" {
		t.Errorf("Requests(\"\") has %d entries, last %+v", len(all), all[len(all)-1])
	}
}

func TestHandleOverridesFixtures(t *testing.T) {
	w := startWeb(t, testArchive)
	w.Handle("example.com", http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(rw, "programmatic")
	}))
	if got := fetch(t, w.Client(), "https://example.com/.well-known/ai-catalog.json").Body; got != "programmatic" {
		t.Errorf("body = %q, want the handler's", got)
	}
}

func TestAddFixturesErrors(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddFixtures([]byte("-- a.example/x --\n1\n")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"-- a.example/x --\nagain\n",
		"-- /nohost --\nx\n",
		"-- a.example/y --\nHTTP 2xx\n\n",
	} {
		if err := w.AddFixtures([]byte(bad)); !errors.Is(err, errFixture) {
			t.Errorf("AddFixtures(%q) err = %v, want errFixture", bad, err)
		}
	}
}

func TestAddFixtureDirSorted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"b.txtar":   "-- b.example/x --\nb\n",
		"a.txtar":   "-- a.example/x --\na\n",
		"skip.json": "not an archive",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddFixtureDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.AddFixtureFile(filepath.Join(dir, "a.txtar")); err == nil {
		t.Error("adding a.txtar twice succeeded")
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, h := range []string{"a", "b"} {
		if got := fetch(t, w.Client(), "https://"+h+".example/x").Body; got != h+"\n" {
			t.Errorf("%s.example body = %q", h, got)
		}
	}
}

func TestNewRejectsNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:443", "example.com:443", "nonsense"} {
		if _, err := New(Options{Addr: addr}); err == nil {
			t.Errorf("New(%q) succeeded", addr)
		}
	}
	w, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !strings.HasPrefix(w.Addr(), "127.0.0.1:") || w.ConnectTo() != "::"+w.Addr() {
		t.Errorf("Addr %q, ConnectTo %q", w.Addr(), w.ConnectTo())
	}
	if err := w.Start(); err == nil {
		t.Error("second Start succeeded")
	}
}

func TestDiscardRequests(t *testing.T) {
	w, err := New(Options{DiscardRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddFixtures([]byte(testArchive)); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fetch(t, w.Client(), "https://example.com/.well-known/ai-catalog.json")
	if got := w.Requests(""); len(got) != 0 {
		t.Errorf("Requests recorded %d entries with DiscardRequests", len(got))
	}
	if got := w.MaxConcurrent("example.com"); got != 1 {
		t.Errorf("MaxConcurrent = %d, want 1", got)
	}
}
