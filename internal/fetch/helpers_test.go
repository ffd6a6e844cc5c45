package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// testCert is a self-signed certificate for the made-up hosts the tests
// fetch from; made once per test binary because key generation is the
// slowest part of setting up a server.
var testCert = sync.OnceValues(func() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cardcrawl test"},
		DNSNames:              []string{"*.example", "a.example", "b.example"},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
})

func testCertPEM(t testing.TB) []byte {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
}

// env is a loopback TLS server reached as a.example and b.example through
// ConnectTo, counting the connections it accepts.
type env struct {
	ts    *httptest.Server
	mux   *http.ServeMux
	host  string // loopback address of the server
	port  string
	conns atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{mux: http.NewServeMux()}
	e.ts = httptest.NewUnstartedServer(e.mux)
	e.ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	e.ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			e.conns.Add(1)
		}
	}
	e.ts.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	e.ts.StartTLS()
	t.Cleanup(e.ts.Close)
	e.host, e.port, err = net.SplitHostPort(e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// client returns a Client that trusts the test certificate, reaches
// a.example:443 and b.example:443 at the server, retries without waiting,
// and resolves every other name through an empty fake DNS unless opts says
// otherwise.
func (e *env) client(t testing.TB, opts Options) *Client {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	if opts.RootCAs == nil {
		pool := x509.NewCertPool()
		pool.AddCert(cert.Leaf)
		opts.RootCAs = pool
	}
	if opts.ConnectTo == nil {
		opts.ConnectTo = []ConnectTo{
			{FromHost: "a.example", FromPort: "443", ToHost: e.host, ToPort: e.port},
			{FromHost: "b.example", FromPort: "443", ToHost: e.host, ToPort: e.port},
		}
	}
	if opts.RetryWait == 0 {
		opts.RetryWait = -1
	}
	if opts.Timeout == 0 {
		// Generous: only a broken test waits this long.
		opts.Timeout = 10 * time.Second
	}
	if opts.Resolver == nil {
		opts.Resolver = fakeResolver(nil)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c.dialer.beforeDial = func(address string) error {
		if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("dial to %s: tests never leave loopback", address)
			return errors.New("test: not a loopback address")
		}
		return nil
	}
	return c
}

// fakeResolver answers A and AAAA queries from names (fully qualified,
// trailing dot) over an in-memory connection; unknown names are NXDOMAIN.
// No packet leaves the process.
func fakeResolver(names map[string][]netip.Addr) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(_ context.Context, _, _ string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, names)
			return client, nil
		},
	}
}

// serveDNS speaks DNS over a stream (two-byte length prefix), which is
// what the Go resolver uses on a connection that is not a PacketConn.
func serveDNS(conn net.Conn, names map[string][]netip.Addr) {
	defer conn.Close()
	for {
		var size [2]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, msg); err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(msg)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		addrs, known := names[q.Name.String()]
		b := dnsmessage.NewBuilder(make([]byte, 2, 512), dnsmessage.Header{
			ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true,
			RCode: map[bool]dnsmessage.RCode{true: dnsmessage.RCodeSuccess, false: dnsmessage.RCodeNameError}[known],
		})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		for _, a := range addrs {
			switch {
			case q.Type == dnsmessage.TypeA && a.Is4():
				_ = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
			case q.Type == dnsmessage.TypeAAAA && a.Is6():
				_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
		}
		out, err := b.Finish()
		if err != nil {
			return
		}
		binary.BigEndian.PutUint16(out, uint16(len(out)-2))
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}
