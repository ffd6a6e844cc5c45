package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ConnectTo rewrites where a host:port is connected to, with curl's
// --connect-to meaning: an empty FromHost or FromPort matches any, an empty
// ToHost or ToPort keeps the original. The URL, the Host header and the TLS
// server name stay the original ones. A ToHost named by the operator is
// trusted (not judged against the refused ranges); addresses that documents
// point to never are.
type ConnectTo struct{ FromHost, FromPort, ToHost, ToPort string }

// ParseConnectTo parses "HOST1:PORT1:HOST2:PORT2"; IPv6 hosts are written
// in [brackets] and stored without them.
func ParseConnectTo(s string) (ConnectTo, error) {
	var fields []string
	rest := s
	for {
		var f string
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return ConnectTo{}, fmt.Errorf("connect-to %q: unclosed '['", s)
			}
			f, rest = rest[1:end], rest[end+1:]
			if f == "" || !strings.Contains(f, ":") {
				return ConnectTo{}, fmt.Errorf("connect-to %q: [%s] is not an ipv6 address", s, f)
			}
			if rest != "" && rest[0] != ':' {
				return ConnectTo{}, fmt.Errorf("connect-to %q: expected ':' after ']'", s)
			}
		} else {
			i := strings.IndexByte(rest, ':')
			if i < 0 {
				i = len(rest)
			}
			f, rest = rest[:i], rest[i:]
		}
		fields = append(fields, f)
		if rest == "" {
			break
		}
		rest = rest[1:] // the ':'
	}
	if len(fields) != 4 {
		return ConnectTo{}, fmt.Errorf("connect-to %q: want HOST1:PORT1:HOST2:PORT2, got %d fields", s, len(fields))
	}
	for _, p := range []string{fields[1], fields[3]} {
		if p == "" {
			continue
		}
		// Only the canonical spelling: match compares ports as strings, so
		// "+443" or "0443" would be accepted and never match anything.
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
			return ConnectTo{}, fmt.Errorf("connect-to %q: bad port %q", s, p)
		}
	}
	return ConnectTo{
		FromHost: strings.ToLower(fields[0]), FromPort: fields[1],
		ToHost: fields[2], ToPort: fields[3],
	}, nil
}

// match reports whether c applies to host:port.
func (c ConnectTo) match(host, port string) bool {
	return (c.FromHost == "" || strings.EqualFold(c.FromHost, host)) &&
		(c.FromPort == "" || c.FromPort == port)
}

// dialer connects to the addresses a URL host really resolves to, refusing
// blocked ones, so a DNS answer cannot route a fetch into the network the
// crawler runs in.
type dialer struct {
	connectTo []ConnectTo
	resolver  *net.Resolver
	// lookupFirst (Options.DNSServer) resolves a name, as rooted, even when
	// a ConnectTo rule names where to connect, so a name that does not
	// exist fails as it would without the rule.
	lookupFirst bool
	timeout     time.Duration
	logger      *slog.Logger
	// beforeDial, when set (tests only), sees each address about to be
	// dialled and can veto it, so no test can reach the internet even when
	// the guard it tests is broken.
	beforeDial func(address string) error

	// open counts the connections dialled and not yet closed. The
	// transport caps idle HTTP/1 connections (MaxIdleConns), but keeps
	// every idle HTTP/2 connection until IdleConnTimeout: a crawl meets
	// new hosts at hundreds a second, so each dial past maxOpen asks
	// closeIdle to drop the idle ones (requests in flight keep theirs).
	open      atomic.Int64
	maxOpen   int64
	closeIdle func()
	closing   atomic.Bool
}

// countedConn decrements the dialer's count of open connections once.
type countedConn struct {
	net.Conn
	once sync.Once
	d    *dialer
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.d.open.Add(-1) })
	return c.Conn.Close()
}

// track counts a new connection and, past maxOpen, closes the idle ones.
func (d *dialer) track(conn net.Conn) net.Conn {
	if d.open.Add(1) > d.maxOpen && d.maxOpen > 0 && d.closeIdle != nil && d.closing.CompareAndSwap(false, true) {
		// The transport dials outside its locks, so closing its idle
		// connections from here is safe; one dialler does it at a time.
		d.closeIdle()
		d.closing.Store(false)
	}
	return &countedConn{Conn: conn, d: d}
}

// DialContext is http.Transport's dial hook. addr is the URL's host:port;
// TLS is layered on top by the transport with the URL host as server name.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	ips, port, trusted, err := d.addresses(ctx, host, port)
	if err != nil {
		return nil, err
	}
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 30 * time.Second}
	if !trusted {
		// Judge the socket address itself too, so nothing between
		// resolution and connect can swap in another address.
		nd.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			return checkSocketAddress(address)
		}
	}
	var errs []error
	for _, ip := range ips {
		address := net.JoinHostPort(ip.String(), port)
		if d.beforeDial != nil {
			if err := d.beforeDial(address); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		conn, err := nd.DialContext(ctx, network, address)
		if err == nil {
			return d.track(conn), nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// addresses is where a connection to host:port would go: the first matching
// --connect-to rule applied (curl's rule), then the host resolved. Unless the
// operator named the target, any blocked answer refuses the host, not only
// the ones we would pick: a name mixing public and internal addresses is a
// rebinding setup, and a retry could land on the internal one.
func (d *dialer) addresses(ctx context.Context, host, port string) (ips []netip.Addr, toPort string, trusted bool, err error) {
	for _, c := range d.connectTo {
		if !c.match(host, port) {
			continue
		}
		if c.ToHost != "" {
			if d.lookupFirst {
				if _, err := d.resolve(ctx, host); err != nil {
					return nil, "", false, err
				}
			}
			host, trusted = c.ToHost, true
		}
		if c.ToPort != "" {
			port = c.ToPort
		}
		break // curl uses the first match
	}
	ips, err = d.resolve(ctx, host)
	if err != nil {
		return nil, "", false, err
	}
	if !trusted {
		for _, ip := range ips {
			if IsBlockedIP(ip) {
				return nil, "", false, fmt.Errorf("%w: %s resolves to %s", ErrBlockedAddress, host, ip)
			}
		}
	}
	return ips, port, trusted, nil
}

func (d *dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	name := host
	if d.lookupFirst && !strings.HasSuffix(name, ".") {
		name += "."
	}
	ips, err := d.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	for i := range ips {
		ips[i] = ips[i].Unmap()
	}
	return ips, nil
}

// serverResolver resolves through one DNS server only, whatever
// /etc/resolv.conf names. The operator chose it, so it is dialled directly;
// its answers are still judged like any other.
func serverResolver(server string) *net.Resolver {
	var nd net.Dialer
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return nd.DialContext(ctx, network, server)
		},
	}
}

// checkSocketAddress judges the ip:port a socket is about to connect to.
func checkSocketAddress(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || IsBlockedIP(ap.Addr()) {
		return fmt.Errorf("%w: connect to %s", ErrBlockedAddress, address)
	}
	return nil
}
