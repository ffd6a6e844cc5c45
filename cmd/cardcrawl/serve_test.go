package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
