package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// The DNS server option itself is exercised end to end against the
// simulated web's DNS server in internal/simweb (TestGeneratedFaultsFailAsRealOnes);
// these are the rules around it.

func TestDNSServerOptionErrors(t *testing.T) {
	for _, opts := range []Options{
		{DNSServer: "127.0.0.1"},
		{DNSServer: "127.0.0.1:"},
		{DNSServer: "127.0.0.1:53", Resolver: fakeResolver(nil)},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
}

// TestLookupFirstWithConnectTo: with a DNS server named, a name that does
// not exist fails even when a --connect-to rule says where to connect, and
// the lookup asks for the rooted name.
func TestLookupFirstWithConnectTo(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	c.dialer.lookupFirst = true
	c.dialer.resolver = fakeResolver(map[string][]netip.Addr{"a.example.": {netip.MustParseAddr("192.0.2.1")}})
	ips, port, trusted, err := c.dialer.addresses(context.Background(), "a.example", "443")
	if err != nil || !trusted || port != e.port || len(ips) != 1 || ips[0].String() != e.host {
		t.Errorf("a.example: %v %s %v %v; want the --connect-to target, trusted", ips, port, trusted, err)
	}
	_, _, _, err = c.dialer.addresses(context.Background(), "b.example", "443")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound || Class(err, 0) != ClassDNS {
		t.Errorf("b.example: %v, want a not-found DNS error", err)
	}
	c.dialer.lookupFirst = false
	if _, _, _, err := c.dialer.addresses(context.Background(), "b.example", "443"); err != nil {
		t.Errorf("b.example without lookupFirst: %v, want the rule alone to decide", err)
	}
}
