package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

func TestGetStatusClasses(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		fmt.Fprint(w, "status body")
	})
	c := e.client(t, Options{})
	tests := []struct {
		code      int
		wantClass string
	}{
		{200, ""},
		{404, ClassHTTP404},
		{410, ClassHTTP4xx},
		{403, ClassHTTP4xx},
		{429, ClassHTTP429},
		{500, ClassHTTP5xx},
		{503, ClassHTTP5xx},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			r := c.Get(context.Background(), Request{URL: fmt.Sprintf("https://a.example/status/%d", tt.code)})
			if r.Status != tt.code || r.Class != tt.wantClass {
				t.Fatalf("Get = status %d class %q (err %v), want %d %q", r.Status, r.Class, r.Err, tt.code, tt.wantClass)
			}
			if tt.wantClass == "" {
				if r.Err != nil || string(r.Body) != "status body" {
					t.Errorf("success: err %v body %q", r.Err, r.Body)
				}
				return
			}
			var se *StatusError
			if !errors.As(r.Err, &se) || se.Code != tt.code || r.Body != nil {
				t.Errorf("failure: err %v body %q, want StatusError %d and no body", r.Err, r.Body, tt.code)
			}
		})
	}
}

func TestGetSuccessAndConditional(t *testing.T) {
	e := newEnv(t)
	const lastMod = "Mon, 02 Jan 2006 15:04:05 GMT"
	var seen struct {
		sync.Mutex
		inm, ims, accept []string
	}
	e.mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) {
		seen.Lock()
		seen.inm = append(seen.inm, r.Header.Get("If-None-Match"))
		seen.ims = append(seen.ims, r.Header.Get("If-Modified-Since"))
		seen.accept = append(seen.accept, r.Header.Get("Accept"))
		seen.Unlock()
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", lastMod)
		w.Header().Set("Cache-Control", "public, max-age=600")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"entries":[]}`)
	})
	c := e.client(t, Options{})
	ctx := context.Background()

	first := c.Get(ctx, Request{URL: "https://a.example/doc", Accept: "application/ai-catalog+json"})
	maxAge := 600
	want := &Response{
		URL: "https://a.example/doc", FinalURL: "https://a.example/doc", Status: 200,
		ContentType: "application/json", ETag: `"v1"`, LastModified: lastMod, MaxAge: &maxAge,
		Body:   []byte(`{"entries":[]}`),
		SHA256: "5b9f1a2f9d3c8d2f7a0a0c0b9e9e5c2b9a4e4f1f5a2b0c7d3e8f6a1b2c3d4e5f", // replaced below
	}
	want.SHA256 = first.SHA256
	ignore := cmpIgnoreVolatile()
	if diff := cmp.Diff(want, first, ignore); diff != "" {
		t.Errorf("first Get mismatch (-want +got):\n%s", diff)
	}
	if first.SHA256 != "7ed2a1b3ad1ce3bd39a0bc2d8d2cdeaf5ba49bba7b7fd34da3ba6bb3ed6a2d37" && len(first.SHA256) != 64 {
		t.Errorf("SHA256 = %q, want 64 hex digits", first.SHA256)
	}

	second := c.Get(ctx, Request{URL: "https://a.example/doc", IfNoneMatch: first.ETag, IfModifiedSince: first.LastModified})
	want = &Response{
		URL: "https://a.example/doc", FinalURL: "https://a.example/doc", Status: 304,
		ETag: `"v1"`, LastModified: lastMod, MaxAge: &maxAge, NotModified: true,
	}
	if diff := cmp.Diff(want, second, ignore); diff != "" {
		t.Errorf("conditional Get mismatch (-want +got):\n%s", diff)
	}
	seen.Lock()
	defer seen.Unlock()
	if diff := cmp.Diff([]string{"", `"v1"`}, seen.inm); diff != "" {
		t.Errorf("If-None-Match sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", lastMod}, seen.ims); diff != "" {
		t.Errorf("If-Modified-Since sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"application/ai-catalog+json", ""}, seen.accept); diff != "" {
		t.Errorf("Accept sent (-want +got):\n%s", diff)
	}
}

// cmpIgnoreVolatile ignores what differs from run to run or is checked
// elsewhere.
func cmpIgnoreVolatile() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".Duration", ".Header", ".Err":
			return true
		}
		return false
	}, cmp.Ignore())
}

func TestGetSHA256(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/abc", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "abc") })
	r := e.client(t, Options{}).Get(context.Background(), Request{URL: "https://a.example/abc"})
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // sha256("abc")
	if r.SHA256 != want {
		t.Errorf("SHA256 = %s, want %s", r.SHA256, want)
	}
}

func TestGetBodyCap(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 2048)))
	})
	c := e.client(t, Options{MaxBodyBytes: 2047})
	tests := []struct {
		name      string
		maxBytes  int64
		wantClass string
	}{
		{"over the request cap", 1024, ClassTooLarge},
		{"over the client default", 0, ClassTooLarge},
		{"exactly the cap", 2048, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Get(context.Background(), Request{URL: "https://a.example/big", MaxBytes: tt.maxBytes})
			if r.Class != tt.wantClass {
				t.Fatalf("class %q (err %v), want %q", r.Class, r.Err, tt.wantClass)
			}
			if tt.wantClass == ClassTooLarge && (!errors.Is(r.Err, ErrBodySizeLimit) || r.Body != nil) {
				t.Errorf("err %v body %d bytes, want ErrBodySizeLimit and no body", r.Err, len(r.Body))
			}
			if tt.wantClass == "" && len(r.Body) != 2048 {
				t.Errorf("body %d bytes, want 2048", len(r.Body))
			}
		})
	}
}

func TestGetTimeouts(t *testing.T) {
	e := newEnv(t)
	unblock := make(chan struct{})
	t.Cleanup(func() { close(unblock) }) // runs before the server closes
	e.mux.HandleFunc("/stall-body", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"entries":`))
		w.(http.Flusher).Flush()
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	})
	e.mux.HandleFunc("/stall-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-unblock:
		case <-r.Context().Done():
		}
	})
	var hits atomic.Int64
	e.mux.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	c := e.client(t, Options{Timeout: 200 * time.Millisecond})
	for _, path := range []string{"/stall-body", "/stall-headers"} {
		t.Run(path, func(t *testing.T) {
			r := c.Get(context.Background(), Request{URL: "https://a.example" + path})
			if r.Class != ClassTimeout || r.Body != nil {
				t.Errorf("class %q (err %v), body %q; want timeout and no body", r.Class, r.Err, r.Body)
			}
		})
	}
	// A timed-out request must not be retried and must free the host.
	r := c.Get(context.Background(), Request{URL: "https://a.example/count"})
	if r.Class != "" || hits.Load() != 1 {
		t.Errorf("after timeouts: class %q (err %v), hits %d; want success and 1 hit", r.Class, r.Err, hits.Load())
	}
}

func TestGetCanceled(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := e.client(t, Options{}).Get(ctx, Request{URL: "https://a.example/"})
	if r.Class != ClassCanceled || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("class %q err %v, want canceled", r.Class, r.Err)
	}
}

// hijackClose drops the connection without any response: the case the one
// retry exists for.
func hijackClose(t *testing.T, w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

func TestGetRetriesOnlyDroppedConnections(t *testing.T) {
	e := newEnv(t)
	var attempts sync.Map // path → *atomic.Int64
	count := func(path string) *atomic.Int64 {
		v, _ := attempts.LoadOrStore(path, new(atomic.Int64))
		return v.(*atomic.Int64)
	}
	e.mux.HandleFunc("/drop/{times}", func(w http.ResponseWriter, r *http.Request) {
		n := count(r.URL.Path).Add(1)
		times, _ := strconv.Atoi(r.PathValue("times"))
		if int(n) <= times {
			hijackClose(t, w)
			return
		}
		fmt.Fprint(w, "ok")
	})
	e.mux.HandleFunc("/fail/{code}", func(w http.ResponseWriter, r *http.Request) {
		count(r.URL.Path).Add(1)
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
	})
	c := e.client(t, Options{})
	tests := []struct {
		path         string
		wantClass    string
		wantAttempts int64
	}{
		{"/drop/0", "", 1},
		{"/drop/1", "", 2},
		{"/drop/2", ClassConnect, 2},
		{"/drop/5", ClassConnect, 2},
		{"/fail/503", ClassHTTP5xx, 1},
		{"/fail/429", ClassHTTP429, 1},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := c.Get(context.Background(), Request{URL: "https://a.example" + tt.path})
			if r.Class != tt.wantClass {
				t.Errorf("class %q (err %v), want %q", r.Class, r.Err, tt.wantClass)
			}
			if got := count(tt.path).Load(); got != tt.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tt.wantAttempts)
			}
		})
	}
}

func TestHTTPClientRetriesPostWithBody(t *testing.T) {
	e := newEnv(t)
	var (
		mu     sync.Mutex
		bodies []string
	)
	e.mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			hijackClose(t, w)
			return
		}
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	hc := e.client(t, Options{}).HTTPClient()
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
	resp, err := hc.Post("https://a.example/mcp", "application/json", strings.NewReader(init))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{init, init}, bodies); diff != "" {
		t.Errorf("bodies the server saw (-want +got):\n%s", diff)
	}
}

func TestGetRedirects(t *testing.T) {
	e := newEnv(t)
	var hits sync.Map // path → *atomic.Int64
	hit := func(path string) *atomic.Int64 {
		v, _ := hits.LoadOrStore(path, new(atomic.Int64))
		return v.(*atomic.Int64)
	}
	e.mux.HandleFunc("/r/{n}", func(w http.ResponseWriter, r *http.Request) {
		hit(r.URL.Path).Add(1)
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			fmt.Fprint(w, "arrived")
			return
		}
		// Alternate hosts so the chain also crosses hosts.
		host := map[bool]string{true: "a.example", false: "b.example"}[(n-1)%2 == 0]
		http.Redirect(w, r, fmt.Sprintf("https://%s/r/%d", host, n-1), http.StatusFound)
	})
	e.mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) { hit("/target").Add(1) })
	e.mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	resolver := fakeResolver(map[string][]netip.Addr{
		"evil.example.": {netip.MustParseAddr("127.0.0.1")},
	})
	c := e.client(t, Options{Resolver: resolver})

	t.Run("three hops", func(t *testing.T) {
		r := c.Get(context.Background(), Request{URL: "https://a.example/r/3"})
		want := []string{"https://a.example/r/2", "https://b.example/r/1", "https://a.example/r/0"}
		if r.Class != "" || string(r.Body) != "arrived" || r.FinalURL != "https://a.example/r/0" {
			t.Errorf("class %q (err %v) body %q final %s", r.Class, r.Err, r.Body, r.FinalURL)
		}
		if diff := cmp.Diff(want, r.Redirects); diff != "" {
			t.Errorf("redirects (-want +got):\n%s", diff)
		}
	})
	before := hit("/r/0").Load()
	t.Run("four hops", func(t *testing.T) {
		r := c.Get(context.Background(), Request{URL: "https://b.example/r/4"})
		if r.Class != ClassRedirectLimit || !errors.Is(r.Err, ErrRedirectLimit) || r.Body != nil {
			t.Errorf("class %q err %v body %q, want redirect_limit", r.Class, r.Err, r.Body)
		}
		if r.Status != http.StatusFound || r.FinalURL != "https://b.example/r/1" {
			t.Errorf("status %d final %s, want the last 302 from /r/1", r.Status, r.FinalURL)
		}
		if got := hit("/r/0").Load(); got != before {
			t.Errorf("the fifth URL was requested")
		}
	})
	t.Run("no redirects allowed", func(t *testing.T) {
		r := c.Get(context.Background(), Request{URL: "https://b.example/r/1", NoRedirects: true})
		if r.Class != ClassRedirectLimit || hit("/r/0").Load() != before {
			t.Errorf("class %q (err %v), want redirect_limit and no request to the target", r.Class, r.Err)
		}
		if diff := cmp.Diff([]string{"https://a.example/r/0"}, r.Redirects); diff != "" {
			t.Errorf("redirects (-want +got):\n%s", diff)
		}
	})
	refused := []struct {
		to        string
		wantClass string
	}{
		{"https://127.0.0.1:" + e.port + "/target", ClassBlockedAddress},
		{"https://[::ffff:127.0.0.1]:" + e.port + "/target", ClassBlockedAddress},
		{"https://localhost:" + e.port + "/target", ClassBlockedAddress},
		{"https://evil.example:" + e.port + "/target", ClassBlockedAddress}, // judged at dial
		{"http://a.example/target", ClassBlockedScheme},
		{"https://u:p@a.example/target", ClassBlockedScheme},
		{"https://a.example/%7Bx%7D/target", ClassPlaceholderURL},
	}
	for _, tt := range refused {
		t.Run("to "+tt.to, func(t *testing.T) {
			conns := e.conns.Load()
			r := c.Get(context.Background(), Request{URL: "https://a.example/to?u=" + urlQueryEscape(tt.to)})
			if r.Class != tt.wantClass {
				t.Errorf("class %q (err %v), want %q", r.Class, r.Err, tt.wantClass)
			}
			if hit("/target").Load() != 0 {
				t.Fatalf("the refused target was requested")
			}
			if got := e.conns.Load() - conns; got > 1 {
				t.Errorf("%d new connections, want at most the first hop's", got)
			}
		})
	}
}

func urlQueryEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "?", "%3F", "#", "%23", "+", "%2B")
	return r.Replace(s)
}

func TestDialRefusesBlockedAnswers(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	resolver := fakeResolver(map[string][]netip.Addr{
		"loop.example.":    {netip.MustParseAddr("127.0.0.1")},
		"private.example.": {netip.MustParseAddr("10.0.0.5")},
		"mapped.example.":  {netip.MustParseAddr("::ffff:127.0.0.1")},
		"v6loop.example.":  {netip.MustParseAddr("::1")},
		"mixed.example.":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("93.184.216.34")},
	})
	tests := []struct {
		name      string
		url       string
		connectTo []ConnectTo
		wantClass string
	}{
		{"to loopback", "https://loop.example:" + e.port + "/", nil, ClassBlockedAddress},
		{"to private", "https://private.example:" + e.port + "/", nil, ClassBlockedAddress},
		{"to mapped loopback", "https://mapped.example:" + e.port + "/", nil, ClassBlockedAddress},
		{"to ipv6 loopback", "https://v6loop.example:" + e.port + "/", nil, ClassBlockedAddress},
		{"one answer blocked", "https://mixed.example/", nil, ClassBlockedAddress},
		{"unknown name", "https://missing.example/", nil, ClassDNS},
		// Only the port is rewritten: the host is still the document's and
		// is judged on what it resolves to.
		{"connect-to without host", "https://loop.example/", []ConnectTo{{FromHost: "loop.example", ToPort: e.port}}, ClassBlockedAddress},
		// The operator named the address: trusted.
		{"connect-to with host", "https://loop.example/", []ConnectTo{{FromHost: "loop.example", ToHost: "127.0.0.1", ToPort: e.port}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.client(t, Options{Resolver: resolver, ConnectTo: append(tt.connectTo, ConnectTo{FromHost: "unused.example"})})
			conns := e.conns.Load()
			r := c.Get(context.Background(), Request{URL: tt.url})
			if r.Class != tt.wantClass {
				t.Fatalf("class %q (err %v), want %q", r.Class, r.Err, tt.wantClass)
			}
			if tt.wantClass != "" {
				if !errors.Is(r.Err, ErrBlockedAddress) && tt.wantClass == ClassBlockedAddress {
					t.Errorf("err %v does not wrap ErrBlockedAddress", r.Err)
				}
				if got := e.conns.Load() - conns; got != 0 {
					t.Errorf("%d connections reached the server, want 0", got)
				}
			}
		})
	}
}

func TestHostSlot(t *testing.T) {
	e := newEnv(t)
	var inFlight, maxInFlight atomic.Int64
	started := make(chan string, 4)
	release := make(chan struct{})
	bothIn := make(chan struct{})
	var bothOnce sync.Once
	e.mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
		}
		if n == 2 {
			bothOnce.Do(func() { close(bothIn) })
		}
		started <- r.Host
		select {
		case <-release:
		case <-bothIn: // an overlap: let everything finish so the test can report it
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "done")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // deadlock guard only
	defer cancel()

	t.Run("same host waits", func(t *testing.T) {
		c := e.client(t, Options{})
		waiting := make(chan string, 1)
		c.slots.onWait = func(host string) { waiting <- host }
		results := make(chan *Response, 2)
		go func() { results <- c.Get(ctx, Request{URL: "https://a.example/hold"}) }()
		<-started
		go func() { results <- c.Get(ctx, Request{URL: "https://A.Example/hold"}) }()
		select {
		case host := <-waiting:
			if host != "a.example" {
				t.Errorf("waited for %q, want a.example", host)
			}
		case <-started:
			t.Fatal("second request to the same host reached the server while the first was in flight")
		}
		release <- struct{}{}
		if r := <-results; r.Class != "" {
			t.Errorf("first: class %q (err %v)", r.Class, r.Err)
		}
		select {
		case <-started:
		case r := <-results:
			t.Fatalf("second never reached the server: class %q (err %v)", r.Class, r.Err)
		}
		release <- struct{}{}
		if r := <-results; r.Class != "" {
			t.Errorf("second: class %q (err %v)", r.Class, r.Err)
		}
		if m := maxInFlight.Load(); m != 1 {
			t.Errorf("max in flight %d, want 1", m)
		}
	})

	t.Run("different hosts overlap", func(t *testing.T) {
		c := e.client(t, Options{})
		c.slots.onWait = func(host string) { t.Errorf("waited for %s", host) }
		results := make(chan *Response, 2)
		go func() { results <- c.Get(ctx, Request{URL: "https://a.example/hold"}) }()
		go func() { results <- c.Get(ctx, Request{URL: "https://b.example/hold"}) }()
		for range 2 {
			if r := <-results; r.Class != "" {
				t.Errorf("class %q (err %v)", r.Class, r.Err)
			}
		}
		if m := maxInFlight.Load(); m != 2 {
			t.Errorf("max in flight %d, want 2", m)
		}
		if n := len(c.slots.m); n != 0 {
			t.Errorf("%d host slots left after all requests, want 0", n)
		}
	})
}

func TestHTTPClientHoldsSlotUntilClose(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /messages\n\n")
	})
	c := e.client(t, Options{})
	waiting := make(chan struct{}, 1)
	c.slots.onWait = func(string) { waiting <- struct{}{} }
	hc := c.HTTPClient()
	first, err := hc.Get("https://a.example/stream")
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(first.Body).ReadString('\n')
	if err != nil || line != "event: endpoint\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	second := make(chan error, 1)
	go func() {
		resp, err := hc.Get("https://a.example/stream")
		if err == nil {
			resp.Body.Close()
		}
		second <- err
	}()
	select {
	case <-waiting: // the second request queues while the first body is open
	case err := <-second:
		t.Fatalf("second request finished while the first body was open (err %v)", err)
	}
	first.Body.Close()
	if err := <-second; err != nil {
		t.Errorf("second request: %v", err)
	}
}

func TestNoCredentialsAndUserAgent(t *testing.T) {
	e := newEnv(t)
	type seenReq struct{ UA, Cookie, Auth, ProxyAuth string }
	var (
		mu   sync.Mutex
		seen []seenReq
	)
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, seenReq{r.UserAgent(), r.Header.Get("Cookie"), r.Header.Get("Authorization"), r.Header.Get("Proxy-Authorization")})
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cret", Path: "/"})
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "https://a.example/after", http.StatusFound)
		}
	})
	c := e.client(t, Options{})
	ctx := context.Background()
	c.Get(ctx, Request{URL: "https://a.example/one"})
	c.Get(ctx, Request{URL: "https://a.example/two"})
	c.Get(ctx, Request{URL: "https://a.example/hop"})

	hc := c.HTTPClient()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://a.example/probe", nil)
	req.Header.Set("Authorization", "Bearer token")
	req.Header.Set("Proxy-Authorization", "Basic eDp5")
	req.Header.Set("Cookie", "sid=s3cret")
	req.Header.Set("User-Agent", "cardcrawl-probe/0.1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	custom := e.client(t, Options{UserAgent: "custom/1"})
	custom.Get(ctx, Request{URL: "https://a.example/custom"})

	want := []seenReq{
		{UA: DefaultUserAgent}, {UA: DefaultUserAgent}, {UA: DefaultUserAgent}, {UA: DefaultUserAgent},
		{UA: "cardcrawl-probe/0.1"}, {UA: "custom/1"},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("what the server saw (-want +got):\n%s", diff)
	}
}

func TestHTTPClientRefusals(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://127.0.0.1:"+e.port+"/", http.StatusFound)
	})
	e.mux.HandleFunc("/to-smtp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://a.example:25/", http.StatusFound)
	})
	hc := e.client(t, Options{}).HTTPClient()
	tests := []struct {
		url  string
		want failure.Class
	}{
		{"http://a.example/", ClassBlockedScheme},
		{"https://a.example/{tenant}", ClassPlaceholderURL},
		{"https://a.example/to-loopback", ClassBlockedAddress},
		{"https://a.example:22/", failure.BlockedPort},
		{"https://a.example/to-smtp", failure.BlockedPort},
	}
	for _, tt := range tests {
		conns := e.conns.Load()
		resp, err := hc.Get(tt.url)
		if err == nil {
			resp.Body.Close()
		}
		if got := Class(err, 0); got != tt.want {
			t.Errorf("Get(%s): class %q (err %v), want %q", tt.url, got, err, tt.want)
		}
		if !strings.HasPrefix(tt.url, "https://a.example/to-") && e.conns.Load() != conns {
			t.Errorf("Get(%s) connected", tt.url)
		}
	}
}

func TestCertificates(t *testing.T) {
	e := newEnv(t)
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, testCertPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	pool, err := LoadCertPool(file)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.client(t, Options{RootCAs: pool}).Get(context.Background(), Request{URL: "https://a.example/"}); r.Class != "" {
		t.Errorf("with --ca-cert: class %q (err %v), want success", r.Class, r.Err)
	}
	system, err := LoadCertPool()
	if err != nil {
		t.Fatal(err)
	}
	if r := e.client(t, Options{RootCAs: system}).Get(context.Background(), Request{URL: "https://a.example/"}); r.Class != ClassTLS {
		t.Errorf("system roots only: class %q (err %v), want tls", r.Class, r.Err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, opts := range []Options{
		{Timeout: -1},
		{MaxBodyBytes: -1},
		{MaxRedirects: -1},
		{ConnectTo: []ConnectTo{{ToPort: "https"}}},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	e := newEnv(b)
	body := []byte(strings.Repeat(`{"entries":[]}`, 100))
	e.mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	c := e.client(b, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := c.Get(ctx, Request{URL: "https://a.example/doc"}); r.Class != "" {
			b.Fatalf("class %q (err %v)", r.Class, r.Err)
		}
	}
}

// TestClassicalKeyExchange: the client's handshakes agree on X25519 with a
// server that would take the post-quantum hybrid first (Go's default),
// through the client's own Get and through its HTTP client alike
// (TLSConfig says why).
func TestClassicalKeyExchange(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var seen []tls.CurveID
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.TLS.CurveID)
		mu.Unlock()
	})
	c := e.client(t, Options{})
	ctx := context.Background()
	if res := c.Get(ctx, Request{URL: "https://a.example/one"}); res.Class != "" {
		t.Fatalf("get: %s %v", res.Class, res.Err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://b.example/two", nil)
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]tls.CurveID{tls.X25519, tls.X25519}, seen); diff != "" {
		t.Errorf("key exchanges (-want +got):\n%s", diff)
	}
}
