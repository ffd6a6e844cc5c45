package simweb

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsTTL is the TTL of every answer; the simulated web does not change
// under a running crawl.
const dnsTTL = 300

// ServeDNS answers DNS queries over UDP on addr (loopback; port 0 picks a
// free one) until the Web closes, so that names can fail to resolve:
// NXDOMAIN for unresolvable names (GenerateOptions.UnresolvableShare), and
// for every other name an A record 127.0.0.1 (and no AAAA), where the Web
// listens. Clients still connect through --connect-to; they ask this server
// first only to learn whether a name exists (cardcrawl --dns-server). It
// returns the address it listens on.
func (w *Web) ServeDNS(addr string) (string, error) {
	if err := checkLoopback(addr); err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dns != nil {
		return "", errors.New("simweb: dns already serving")
	}
	select {
	case <-w.closed:
		return "", errors.New("simweb: closed")
	default:
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return "", fmt.Errorf("simweb: dns: %w", err)
	}
	w.dns = pc
	go w.serveDNS(pc)
	return pc.LocalAddr().String(), nil
}

// DNSAddr is the DNS server's address, "127.0.0.1:PORT" (empty before
// ServeDNS).
func (w *Web) DNSAddr() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.dns == nil {
		return ""
	}
	return w.dns.LocalAddr().String()
}

// serveDNS answers one packet at a time: an answer is a few microseconds of
// work, and a crawl sends two small queries per name.
func (w *Web) serveDNS(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				w.log.Error("simweb: dns", "err", err)
			}
			return
		}
		out, err := w.dnsAnswer(buf[:n])
		if err != nil {
			w.log.Debug("simweb: dns: dropped query", "from", from, "err", err)
			continue
		}
		if _, err := pc.WriteTo(out, from); err != nil && !errors.Is(err, net.ErrClosed) {
			w.log.Debug("simweb: dns: reply", "to", from, "err", err)
		}
	}
}

var dnsLoopback = netip.MustParseAddr("127.0.0.1").As4()

// dnsAnswer builds the reply to one query.
func (w *Web) dnsAnswer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	rcode := dnsmessage.RCodeSuccess
	if f, _ := w.faultFor(name); f == faultUnresolvable {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{
		ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired,
		RecursionAvailable: true, RCode: rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if rcode == dnsmessage.RCodeSuccess && q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		if err := b.StartAnswers(); err != nil {
			return nil, err
		}
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		if err := b.AResource(rh, dnsmessage.AResource{A: dnsLoopback}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// checkLoopback refuses addresses that are not loopback: the simulated web
// must never be reachable from elsewhere.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("simweb: bad address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("simweb: address %q is not loopback", addr)
	}
	return nil
}
