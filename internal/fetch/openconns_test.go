package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestOpenConnectionsBounded: the transport keeps every idle HTTP/2
// connection until its idle timeout, whatever MaxIdleConns says; a crawl
// meeting a new host every few milliseconds would hold thousands. Past
// maxOpen, a new connection drops the idle ones.
func TestOpenConnectionsBounded(t *testing.T) {
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	var h2 atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		io.WriteString(w, "{}")
	}))
	ts.EnableHTTP2 = true
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	defer ts.Close()
	host, port, err := net.SplitHostPort(ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	c, err := New(Options{RootCAs: pool, ConnectTo: []ConnectTo{{ToHost: host, ToPort: port}}, RetryWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 8
	c.dialer.maxOpen = limit
	for i := range 5 * limit {
		r := c.Get(context.Background(), Request{URL: fmt.Sprintf("https://h%d.example/x", i)})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if n := c.dialer.open.Load(); n > limit {
			t.Fatalf("after %d hosts, %d connections open, want at most %d", i+1, n, limit)
		}
	}
	if n := h2.Load(); n != 5*limit {
		t.Errorf("%d requests over HTTP/2, want all %d (the case MaxIdleConns does not bound)", n, 5*limit)
	}
}
