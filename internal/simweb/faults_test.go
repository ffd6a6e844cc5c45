package simweb

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	crawlfetch "github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/google/go-cmp/cmp"
)

// recordDelays makes w record its simulated delays instead of waiting.
func recordDelays(w *Web) func() []time.Duration {
	var (
		mu  sync.Mutex
		got []time.Duration
	)
	w.sleep = func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), got...)
	}
}

// delayedWeb starts a Web with the generated web opts, which records its
// simulated delays instead of waiting (see recordDelays) and, with dns,
// answers DNS.
func delayedWeb(t *testing.T, opts GenerateOptions, dns bool) (*Web, []string, func() []time.Duration) {
	t.Helper()
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	delays := recordDelays(w)
	names, err := w.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	if dns {
		if _, err := w.ServeDNS("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, names, delays
}

// fetchClient is cardcrawl's own client pointed at w the way a user points
// it: --connect-to, --ca-cert and, when w serves DNS, --dns-server.
func fetchClient(t *testing.T, w *Web, timeout time.Duration) *crawlfetch.Client {
	t.Helper()
	host, port, err := net.SplitHostPort(w.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c, err := crawlfetch.New(crawlfetch.Options{
		ConnectTo: []crawlfetch.ConnectTo{{ToHost: host, ToPort: port}},
		RootCAs:   w.CertPool(),
		DNSServer: w.DNSAddr(),
		Timeout:   timeout,
		RetryWait: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// domainsByFault sorts generated domains by the fault drawn for them.
func domainsByFault(w *Web, names []string) map[fault][]string {
	out := map[fault][]string{}
	for _, n := range names {
		f, _ := w.faultFor(n)
		out[f] = append(out[f], n)
	}
	return out
}

func TestGeneratedFaultsFailAsRealOnes(t *testing.T) {
	w, names, delays := delayedWeb(t, GenerateOptions{Domains: 200, CatalogShare: 1, CardsPerCatalog: 1, Seed: 7,
		UnresolvableShare: 0.1, RefuseShare: 0.1, HangShare: 0.1, SlowTLSShare: 0.1, SlowTLSDelay: 3 * time.Second}, true)
	by := domainsByFault(w, names)
	for _, f := range []fault{faultNone, faultUnresolvable, faultRefuse, faultHang, faultSlowTLS} {
		if len(by[f]) < 5 {
			t.Fatalf("fault %d drawn for %d of 200 domains; want about 20", f, len(by[f]))
		}
	}

	// The hang costs the client its whole timeout; keep it short.
	c := fetchClient(t, w, 300*time.Millisecond)
	get := func(host string) *crawlfetch.Response {
		return c.Get(context.Background(), crawlfetch.Request{URL: "https://" + host + "/.well-known/ai-catalog.json"})
	}
	for _, tc := range []struct {
		f    fault
		want string
	}{
		{faultNone, ""},
		{faultUnresolvable, crawlfetch.ClassDNS},
		{faultRefuse, crawlfetch.ClassConnect},
		{faultHang, crawlfetch.ClassTimeout},
		{faultSlowTLS, ""},
	} {
		host := by[tc.f][0]
		if got := get(host); got.Class != tc.want {
			t.Errorf("fault %d (%s): class %q (%v), want %q", tc.f, host, got.Class, got.Err, tc.want)
		}
		// A fault covers the domain's subdomains too.
		if tc.f == faultUnresolvable {
			if got := get("mcp0." + host); got.Class != crawlfetch.ClassDNS {
				t.Errorf("subdomain of %s: class %q, want dns", host, got.Class)
			}
		}
	}
	if diff := cmp.Diff([]time.Duration{3 * time.Second}, delays()); diff != "" {
		t.Errorf("simulated delays (-want +got), one slow handshake and no latency:\n%s", diff)
	}

	// Without --dns-server nothing is looked up, so no name is missing.
	host, port, _ := net.SplitHostPort(w.Addr())
	plain, err := crawlfetch.New(crawlfetch.Options{ConnectTo: []crawlfetch.ConnectTo{{ToHost: host, ToPort: port}}, RootCAs: w.CertPool()})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Get(context.Background(), crawlfetch.Request{URL: "https://" + by[faultUnresolvable][0] + "/.well-known/ai-catalog.json"}); got.Class != "" {
		t.Errorf("unresolvable name without a DNS server: class %q, want success", got.Class)
	}
}

func TestCertificateFaults(t *testing.T) {
	w := startWeb(t)
	w.setFault("wrong.example", faultWrongHostCert)
	w.setFault("expired.example", faultExpiredCert)
	c := fetchClient(t, w, 5*time.Second)
	for host, want := range map[string]string{"wrong.example": "certificate is valid for someone-else.example", "expired.example": "expired"} {
		got := c.Get(context.Background(), crawlfetch.Request{URL: "https://" + host + "/"})
		if got.Class != crawlfetch.ClassTLS || got.Err == nil || !strings.Contains(got.Err.Error(), want) {
			t.Errorf("%s: class %q, err %v; want tls mentioning %q", host, got.Class, got.Err, want)
		}
	}
	if got := c.Get(context.Background(), crawlfetch.Request{URL: "https://fine.example/"}); got.Class != crawlfetch.ClassHTTP404 {
		t.Errorf("fine.example: class %q (%v), want http_404 over a good certificate", got.Class, got.Err)
	}
}

func TestLatencyPerResponse(t *testing.T) {
	w, names, delays := delayedWeb(t, GenerateOptions{Domains: 40, CatalogShare: 0.5, CardsPerCatalog: 2, Seed: 3,
		Latency: 100 * time.Millisecond, Jitter: 50 * time.Millisecond}, false)
	c := w.Client()
	var first []time.Duration
	for round := range 2 {
		before := len(delays())
		for _, d := range names {
			fetch(t, c, "https://"+d+"/.well-known/ai-catalog.json") // 404s are delayed too
			fetch(t, c, "https://"+d+"/mcp/0/server-card")
		}
		got := delays()[before:]
		if len(got) != 2*len(names) {
			t.Fatalf("round %d: %d delays for %d responses", round, len(got), 2*len(names))
		}
		if round == 0 {
			first = got
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("delays differ between rounds (-first +second):\n%s", diff)
		}
	}
	var sum time.Duration
	distinct := map[time.Duration]bool{}
	for _, d := range first {
		if d < 50*time.Millisecond || d > 150*time.Millisecond {
			t.Errorf("delay %v outside 100ms ± 50ms", d)
		}
		sum += d
		distinct[d] = true
	}
	if mean := sum / time.Duration(len(first)); mean < 85*time.Millisecond || mean > 115*time.Millisecond {
		t.Errorf("mean delay %v, want about 100ms", mean)
	}
	if len(distinct) < len(first)/2 {
		t.Errorf("only %d distinct delays among %d: jitter is not per host and path", len(distinct), len(first))
	}
	if got := fetch(t, c, "https://other.example/").Status; got != 404 || len(delays()) != 4*len(names) {
		t.Errorf("a host outside the generated web: status %d, delayed %v", got, len(delays()) != 4*len(names))
	}
}

func TestGenerateRejectsBadFaultOptions(t *testing.T) {
	w := startWeb(t)
	for _, bad := range []GenerateOptions{
		{Domains: 1, RefuseShare: -0.1},
		{Domains: 1, HangShare: 1.1},
		{Domains: 1, UnresolvableShare: 0.5, RefuseShare: 0.3, HangShare: 0.3},
		{Domains: 1, Latency: -time.Second},
		{Domains: 1, Jitter: -time.Second},
	} {
		if _, err := w.Generate(bad); err == nil {
			t.Errorf("Generate(%+v) succeeded", bad)
		}
	}
}

func TestDNSAnswers(t *testing.T) {
	w := startWeb(t)
	names, err := w.Generate(GenerateOptions{Domains: 50, Seed: 9, UnresolvableShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := w.ServeDNS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ServeDNS("127.0.0.1:0"); err == nil {
		t.Error("a second ServeDNS succeeded")
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	by := domainsByFault(w, names)
	for _, host := range []string{by[faultNone][0], "anything.else.example", "Mixed.Case.Example"} {
		ips, err := r.LookupNetIP(context.Background(), "ip", host+".")
		if err != nil || len(ips) != 1 || ips[0].String() != "127.0.0.1" {
			t.Errorf("%s: %v %v, want 127.0.0.1 only", host, ips, err)
		}
	}
	for _, host := range []string{by[faultUnresolvable][0], "gone1." + by[faultUnresolvable][0]} {
		_, err := r.LookupNetIP(context.Background(), "ip", host+".")
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s: %v, want not found", host, err)
		}
	}
	other, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ServeDNS("192.0.2.1:53"); err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Errorf("ServeDNS on a non-loopback address: %v", err)
	}
}

// TestHangReleasesWhenTheClientGivesUp: a hanging host holds a connection
// only while its client waits, so hung connections never pile up on the
// server side of a long run.
func TestHangReleasesWhenTheClientGivesUp(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan bool, 2)
	w.onHang = func(holding bool) { events <- holding }
	w.setFault("hang.example", faultHang)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	raw, err := net.Dial("tcp", w.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn := tls.Client(raw, &tls.Config{ServerName: "hang.example", RootCAs: w.CertPool()})
	handshake := make(chan error, 1)
	go func() { handshake <- conn.Handshake() }()
	if !<-events {
		t.Fatal("first event is a release")
	}
	_ = raw.Close() // the client gives up
	if <-events {
		t.Fatal("second event is another hold")
	}
	if err := <-handshake; err == nil {
		t.Error("the handshake with a hanging host succeeded")
	}
}
