package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// failAfter bounds every wait below; no test waits on the clock to pass.
const failAfter = 10 * time.Second

// startServe runs serveHTTP on a loopback port; done is closed when it
// returns, and *serveErr is then what it returned.
func startServe(t *testing.T, ln net.Listener, h http.Handler, o serveOptions) (addr string, cancel func(), done <-chan struct{}, serveErr *error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	finished := make(chan struct{})
	serveErr = new(error)
	go func() {
		*serveErr = serveHTTP(ctx, ln, h, o)
		close(finished)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case <-finished:
		case <-time.After(failAfter):
			t.Error("serve did not stop")
		}
	})
	return ln.Addr().String(), stop, finished, serveErr
}

// keepAlive makes one HTTP/1.1 request on a raw connection, reads the whole
// answer and leaves the connection open and idle.
func keepAlive(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(failAfter))
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: feed.example\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		t.Fatal("the server did not keep the connection alive")
	}
	return c, br
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// capWatch is the listener under serve's connection cap: it notes when it
// is asked for a connection while the cap's worth are still open.
type capWatch struct {
	net.Listener
	max        int32
	open       atomic.Int32
	overCapped atomic.Bool
}

func (l *capWatch) Accept() (net.Conn, error) {
	if l.open.Load() >= l.max {
		l.overCapped.Store(true)
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &watchedConn{Conn: c, l: l}, nil
}

type watchedConn struct {
	net.Conn
	once sync.Once
	l    *capWatch
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// TestServeClosesIdleConnectionsUnderTheCap: with every allowed connection
// held idle by keep-alive clients, a new client still gets /healthz once
// the idle timeout closes them — and no connection past the cap is accepted
// meanwhile.
func TestServeClosesIdleConnectionsUnderTheCap(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	watch := &capWatch{Listener: listen(t), max: 2}
	addr, _, _, _ := startServe(t, watch, h, serveOptions{MaxConns: 2, IdleTimeout: 50 * time.Millisecond})
	var idle []*bufio.Reader
	for range 2 {
		_, br := keepAlive(t, addr)
		idle = append(idle, br)
	}

	late := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
		resp, err := (&http.Client{Timeout: failAfter}).Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(b) != "ok\n" {
				err = fmt.Errorf("status %d, body %q", resp.StatusCode, b)
			}
		}
		late <- err
	}()
	// The event: the server closes each idle connection.
	for i, br := range idle {
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("idle connection %d: %v, want the server to close it (EOF)", i, err)
		}
	}
	if err := <-late; err != nil {
		t.Errorf("/healthz past the cap: %v", err)
	}
	if watch.overCapped.Load() {
		t.Error("a connection past the cap was accepted while the idle ones were open")
	}
}

// TestServeShutdownDrains: Ctrl-C stops accepting, and a request in flight
// still gets its whole answer before serve returns.
func TestServeShutdownDrains(t *testing.T) {
	entered, release, shutting := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		w.Write([]byte("finished\n"))
	})
	addr, cancel, done, serveErr := startServe(t, listen(t), h, serveOptions{onShutdown: func() { close(shutting) }})

	answer := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Timeout: failAfter}).Get("http://" + addr + "/slow")
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	<-entered
	cancel()
	<-shutting
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("a new connection was accepted after shutdown began")
	}
	select {
	case <-done:
		t.Fatalf("serve returned (%v) with a request in flight", *serveErr)
	default:
	}
	close(release)
	if got := <-answer; got != "200 finished\n" {
		t.Errorf("request in flight got %q, want its whole answer", got)
	}
	<-done
	if *serveErr != nil {
		t.Errorf("serve: %v", *serveErr)
	}
}

func TestServeBadMaxConns(t *testing.T) {
	code, _, stderr := run(t, "", "serve", "--max-conns", "0")
	if code != exitUsage || stderr != "cardcrawl: --max-conns must be at least 1\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestServeKeepsSearchIndex: with --search-index, a second serve of the
// same database takes up the index the first left in the file (its first
// catch-up reads nothing) and searches through it; a serve started while
// another holds the file stops with one line and a non-zero exit.
func TestServeKeepsSearchIndex(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	seedDB(t, db, 3)
	index := filepath.Join(t.TempDir(), "search.db")
	start := func() (logs *textWatch, base string, stop func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		logs = &textWatch{want: []string{"serving ", "search index ready"}, seen: make(chan struct{})}
		done := make(chan int, 1)
		go func() {
			done <- runMain(ctx, &env{stdout: io.Discard, stderr: logs, stdin: strings.NewReader("")},
				[]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--search-index", index, "-v"})
		}()
		select {
		case <-logs.seen:
		case code := <-done:
			cancel()
			t.Fatalf("serve exited %d before its search index was ready: %s", code, logs.String())
		case <-time.After(failAfter):
			cancel()
			t.Fatalf("serve's search index not ready: %s", logs.String())
		}
		out := logs.String()
		base = strings.TrimSpace(out[strings.LastIndex(out, "http://"):])
		base = base[:strings.IndexAny(base+"\n", "\n")]
		return logs, base, func() {
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("serve exit %d", code)
			}
		}
	}
	logs, _, stop := start()
	if !strings.Contains(logs.String(), "records=1 ") || strings.Contains(logs.String(), "taken up") {
		t.Errorf("first serve, a new index:\n%s", logs.String())
	}
	code, _, stderr := run(t, "", "serve", "--db", db, "--addr", "127.0.0.1:0", "--search-index", index)
	if code == exitOK || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "in use by another process") {
		t.Errorf("a second serve of the held index: exit %d, stderr %q", code, stderr)
	}
	stop()

	logs, base, stop := start()
	defer stop()
	if !strings.Contains(logs.String(), "taken up") || !strings.Contains(logs.String(), "records=0") {
		t.Errorf("second serve, the kept index:\n%s", logs.String())
	}
	resp, err := http.Get(base + "v0.1/servers?search=example/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"count":1`) {
		t.Errorf("a search through the kept index: %d %s", resp.StatusCode, body)
	}
}

// textWatch is a stderr that closes seen once everything written holds
// every string of want.
type textWatch struct {
	mu   sync.Mutex
	buf  strings.Builder
	want []string
	seen chan struct{}
}

func (w *textWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := w.holds()
	w.buf.Write(p)
	if !had && w.holds() {
		close(w.seen)
	}
	return len(p), nil
}

func (w *textWatch) holds() bool {
	for _, s := range w.want {
		if !strings.Contains(w.buf.String(), s) {
			return false
		}
	}
	return true
}

func (w *textWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
