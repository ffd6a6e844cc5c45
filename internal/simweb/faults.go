package simweb

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// fault is how a host misbehaves below HTTP: in name resolution, at the
// connection, or in its TLS handshake.
type fault uint8

const (
	faultNone fault = iota
	// faultUnresolvable: the Web's DNS server answers NXDOMAIN.
	faultUnresolvable
	// faultRefuse: the connection is reset as soon as the ClientHello names
	// the host, the closest one loopback port can come to a refused
	// connection (see beforeHandshake).
	faultRefuse
	// faultHang: the ClientHello is read and never answered, so the client
	// waits for its own timeout.
	faultHang
	// faultSlowTLS: the handshake is answered after a delay.
	faultSlowTLS
	// faultWrongHostCert: the certificate names another host.
	faultWrongHostCert
	// faultExpiredCert: the certificate expired yesterday.
	faultExpiredCert
)

// maxHang bounds how long a hanging host holds a connection whose client
// never gives up. Real clients time out long before (cardcrawl: 15 s), so
// held connections stay bounded by client concurrency × client timeout;
// this only stops a client that never closes from pinning them forever.
const maxHang = 10 * time.Minute

// errFault aborts a handshake a fault has already dealt with; the server
// logs it at debug level like any failed handshake.
var errFault = errors.New("simweb: scripted connection fault")

// setFault scripts a fault for one host name.
func (w *Web) setFault(host string, f fault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults[normalizeHost(host)] = f
}

// faultFor is the fault of a host: a scripted one, else the one a generator
// drew for it. slow is the handshake delay of faultSlowTLS.
func (w *Web) faultFor(host string) (f fault, slow time.Duration) {
	host = normalizeHost(host)
	w.mu.RLock()
	f, ok := w.faults[host]
	gens := w.gens
	w.mu.RUnlock()
	if ok {
		return f, 0
	}
	for _, g := range gens {
		if _, _, i, ok := g.parse(host); ok {
			return g.fault(i), g.opts.SlowTLSDelay
		}
	}
	return faultNone, 0
}

// beforeHandshake runs when a ClientHello arrives (every handshake,
// resumed ones included) and acts out the host's connection fault.
//
// A refusal cannot be a real ECONNREFUSED: every name reaches the one
// listener through --connect-to, and TCP has accepted before the name is
// known. Resetting the connection (RST, not FIN) right after the
// ClientHello fails the client's dial the way a refused port does, with the
// same failure class (connect); the difference is that the client sees a
// dropped connection, which cardcrawl retries once.
func (w *Web) beforeHandshake(hello *tls.ClientHelloInfo) error {
	f, slow := w.faultFor(hello.ServerName)
	switch f {
	case faultRefuse:
		if tc, ok := hello.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST
		}
		_ = hello.Conn.Close()
		return errFault
	case faultHang:
		// Read until the client gives up (its EOF or RST), the Web closes
		// (http.Server.Close closes connections still in their handshake),
		// or maxHang passes. Nothing but the blocked goroutine is held.
		if w.onHang != nil {
			w.onHang(true)
			defer w.onHang(false)
		}
		_ = hello.Conn.SetReadDeadline(time.Now().Add(maxHang))
		_, _ = io.Copy(io.Discard, hello.Conn)
		_ = hello.Conn.Close()
		return errFault
	case faultSlowTLS:
		w.pause(nil, slow)
	}
	return nil
}

// certificate issues the certificate a host presents, honouring the
// certificate faults.
func (w *Web) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := time.Now()
	switch f, _ := w.faultFor(hello.ServerName); f {
	case faultWrongHostCert:
		return w.ca.issue("wrong:"+hello.ServerName, "someone-else.example", now.Add(-time.Hour), now.Add(7*24*time.Hour))
	case faultExpiredCert:
		return w.ca.issue("expired:"+hello.ServerName, hello.ServerName, now.Add(-30*24*time.Hour), now.Add(-24*time.Hour))
	}
	return w.ca.leaf(hello.ServerName, now)
}

// pause waits d (a simulated round trip or handshake), or less if the
// request's client goes away (r may be nil) or the Web closes. Tests replace
// it through Web.sleep to observe delays without waiting.
func (w *Web) pause(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	if w.sleep != nil {
		w.sleep(d)
		return
	}
	var gone <-chan struct{}
	if r != nil {
		gone = r.Context().Done()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-gone:
	case <-w.closed:
	}
}
