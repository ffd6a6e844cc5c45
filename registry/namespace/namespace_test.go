package namespace_test

import (
	"context"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/store"
)

func edKey() string {
	pub := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	return base64.StdEncoding.EncodeToString(pub)
}

// p384Key is the curve's generator point, compressed: a valid public key
// without randomness.
func p384Key() string {
	c := elliptic.P384()
	return base64.StdEncoding.EncodeToString(elliptic.MarshalCompressed(c, c.Params().Gx, c.Params().Gy))
}

func TestParseProofs(t *testing.T) {
	offCurve := append([]byte{2}, []byte(strings.Repeat("\xff", 48))...)
	tests := []struct {
		name string
		in   string
		want []namespace.Proof
	}{
		{"ed25519", "v=MCPv1; k=ed25519; p=" + edKey(), []namespace.Proof{{Algorithm: "ed25519", Key: edKey(), Valid: true}}},
		{"ecdsap384 without spaces", "v=MCPv1;k=ecdsap384;p=" + p384Key(), []namespace.Proof{{Algorithm: "ecdsap384", Key: p384Key(), Valid: true}}},
		{"short ed25519", "v=MCPv1; k=ed25519; p=AAAA", []namespace.Proof{{Algorithm: "ed25519", Key: "AAAA", Problem: "ed25519 key is 3 bytes, want 32"}}},
		{"bad base64", "v=MCPv1; k=ed25519; p=A", []namespace.Proof{{Algorithm: "ed25519", Key: "A", Problem: "key is not valid base64"}}},
		{"uncompressed p384", "v=MCPv1; k=ecdsap384; p=" + base64.StdEncoding.EncodeToString(append([]byte{4}, make([]byte, 48)...)),
			[]namespace.Proof{{Algorithm: "ecdsap384", Key: base64.StdEncoding.EncodeToString(append([]byte{4}, make([]byte, 48)...)), Problem: "ecdsap384 key is not a compressed point (first byte must be 0x02 or 0x03)"}}},
		{"off-curve p384", "v=MCPv1; k=ecdsap384; p=" + base64.StdEncoding.EncodeToString(offCurve),
			[]namespace.Proof{{Algorithm: "ecdsap384", Key: base64.StdEncoding.EncodeToString(offCurve), Problem: "ecdsap384 key is not a point on P-384"}}},
		{"rsa", "v=MCPv1; k=rsa; p=AAAA", []namespace.Proof{{Algorithm: "rsa", Key: "AAAA", Problem: `unsupported algorithm "rsa"`}}},
		{"two records", "v=MCPv1; k=rsa; p=AAAA\nv=MCPv1; k=ed25519; p=" + edKey(), []namespace.Proof{
			{Algorithm: "rsa", Key: "AAAA", Problem: `unsupported algorithm "rsa"`},
			{Algorithm: "ed25519", Key: edKey(), Valid: true}}},
		{"none", "v=spf1 -all", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, namespace.ParseProofs(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyAndOffline(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want namespace.Namespace
	}{
		{"com.example.mcp", namespace.Namespace{Name: "com.example.mcp", Kind: namespace.KindDomain, Domain: "mcp.example.com"}},
		{"io.github.Octo-Cat", namespace.Namespace{Name: "io.github.Octo-Cat", Kind: namespace.KindGitHub, Account: "Octo-Cat"}},
		{"io.github", namespace.Namespace{Name: "io.github", Kind: namespace.KindDomain, Domain: "github.io"}},
		{"single", namespace.Namespace{Name: "single", Kind: namespace.KindOther}},
		{"a..b", namespace.Namespace{Name: "a..b", Kind: namespace.KindInvalid}},
		// Not hostnames: they must never turn into a domain to fetch from.
		{"com.example@evil", namespace.Namespace{Name: "com.example@evil", Kind: namespace.KindInvalid}},
		{"com.example:8443", namespace.Namespace{Name: "com.example:8443", Kind: namespace.KindInvalid}},
		{"com.-example", namespace.Namespace{Name: "com.-example", Kind: namespace.KindInvalid}},
		{"com.exa_mple", namespace.Namespace{Name: "com.exa_mple", Kind: namespace.KindInvalid}},
		{"com." + strings.Repeat("a", 64), namespace.Namespace{Name: "com." + strings.Repeat("a", 64), Kind: namespace.KindInvalid}},
		{"com.Example-1", namespace.Namespace{Name: "com.Example-1", Kind: namespace.KindDomain, Domain: "example-1.com"}},
	} {
		if diff := cmp.Diff(tt.want, namespace.Classify(tt.in)); diff != "" {
			t.Errorf("Classify(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	if r := namespace.Offline(namespace.Classify("com.example@evil"), nil); r.Method != namespace.MethodNone || r.Note == "" {
		t.Errorf("Offline(invalid) = %+v, want method none and a note", r)
	}
	if got := namespace.Of("com.example/x"); got != "com.example" {
		t.Errorf("Of = %q", got)
	}
	got := namespace.Offline(namespace.Classify("io.github.octo"), []string{
		"https://github.com/Octo/a.git", "https://github.com/octo/b", "https://github.com/other/c", "https://github.com/octo/b", "",
	})
	want := namespace.Result{Namespace: namespace.Namespace{Name: "io.github.octo", Kind: namespace.KindGitHub, Account: "octo"},
		Method: namespace.MethodGitHub, Methods: []string{namespace.MethodGitHub},
		GitHub: &namespace.GitHubCheck{Account: "octo", Repositories: 3, SameAccount: 2, Elsewhere: []string{"https://github.com/other/c"}}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(namespace.GitHubCheck{}, "Note")); diff != "" {
		t.Errorf("Offline (-want +got):\n%s", diff)
	}

	// Repositories under other accounts are named up to ten, the first in
	// byte order, and the rest counted: the result rides on every record
	// under the namespace, and anyone can publish cards under it.
	var repos, elsewhere []string
	for i := range 13 {
		u := fmt.Sprintf("https://github.com/other%02d/r", 12-i)
		repos = append(repos, u, u, "https://github.com/octo/own")
		elsewhere = append(elsewhere, fmt.Sprintf("https://github.com/other%02d/r", i))
	}
	got = namespace.Offline(namespace.Classify("io.github.octo"), repos)
	want.GitHub = &namespace.GitHubCheck{Account: "octo", Repositories: 14, SameAccount: 1, Elsewhere: elsewhere[:10], ElsewhereMore: 3}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(namespace.GitHubCheck{}, "Note")); diff != "" {
		t.Errorf("Offline, many repositories elsewhere (-want +got):\n%s", diff)
	}
}

// dnsServer answers TXT queries from zone on a loopback UDP port and
// returns a resolver that talks only to it. (miekg/dns was dropped from
// go.mod, so the server speaks through x/net's dnsmessage.)
func dnsServer(t *testing.T, zone map[string][]string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var req dnsmessage.Message
			if req.Unpack(buf[:n]) != nil || len(req.Questions) != 1 {
				continue
			}
			q := req.Questions[0]
			resp := dnsmessage.Message{Header: dnsmessage.Header{ID: req.ID, Response: true, Authoritative: true, RecursionDesired: req.RecursionDesired, RecursionAvailable: true},
				Questions: req.Questions}
			txts, ok := zone[strings.ToLower(q.Name.String())]
			switch {
			case !ok:
				resp.RCode = dnsmessage.RCodeNameError
			case q.Type == dnsmessage.TypeTXT:
				for _, s := range txts {
					// A record's strings are at most 255 bytes each; a
					// resolver joins them.
					var parts []string
					for len(s) > 255 {
						parts, s = append(parts, s[:255]), s[255:]
					}
					resp.Answers = append(resp.Answers, dnsmessage.Resource{
						Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassINET, TTL: 60},
						Body:   &dnsmessage.TXTResource{TXT: append(parts, s)}})
				}
			}
			out, err := resp.Pack()
			if err != nil {
				continue
			}
			pc.WriteTo(out, from)
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

func TestCheck(t *testing.T) {
	// A domain that serves more proof records than a check keeps: a long
	// one and eight more that are not valid, then one that is.
	bad := "v=MCPv1; k=ed25519; p=AAAA"
	long := bad + " " + strings.Repeat("x", 300)
	many := append([]string{long}, slices.Repeat([]string{bad}, 8)...)
	many = append(many, "v=MCPv1; k=ed25519; p="+edKey())
	resolver := dnsServer(t, map[string][]string{
		"many.example.com.": many,
		"example.com.":      {"google-site-verification=xyz", "v=MCPv1; k=ed25519; p=" + edKey()},
		"bad.example.com.":  {"v=MCPv1; k=ed25519; p=AAAA"},
		// A proof where the Registry does not read it, and one beside a
		// record where it does.
		"_mcp-auth.example.net.":     {"v=MCPv1; k=ed25519; p=" + edKey()},
		"_mcp-auth.bad.example.com.": {"v=MCPv1; k=ed25519; p=" + edKey()},
	})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/mcp-registry-auth" {
			http.NotFound(w, r)
			return
		}
		switch r.Host {
		case "example.com":
			w.Write([]byte("v=MCPv1; k=ecdsap384; p=" + p384Key() + "\n"))
		case "redirect.example.com":
			http.Redirect(w, r, "https://example.com/.well-known/mcp-registry-auth", http.StatusFound)
		case "many.example.com":
			w.Write([]byte("v=MCPv1; k=ed25519; p=" + edKey() + strings.Repeat("\n"+bad, 11)))
		case "big.example.com":
			w.Write([]byte("v=MCPv1; k=ed25519; p=" + edKey() + strings.Repeat(" ", 5000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	fc, err := fetch.New(fetch.Options{ConnectTo: []fetch.ConnectTo{{ToHost: u.Hostname(), ToPort: u.Port()}}, RootCAs: pool, RetryWait: -1, Resolver: resolver})
	if err != nil {
		t.Fatal(err)
	}
	c := namespace.NewChecker(namespace.Options{HTTP: fc, Resolver: resolver})
	ed := namespace.Proof{Algorithm: "ed25519", Key: edKey(), Valid: true}
	edRecord := "v=MCPv1; k=ed25519; p=" + edKey()
	badProof := namespace.Proof{Algorithm: "ed25519", Key: "AAAA", Problem: "ed25519 key is 3 bytes, want 32"}
	tests := []struct {
		ns   string
		want namespace.Result
	}{
		{"com.example", namespace.Result{Method: "http", Methods: []string{"http", "dns"},
			HTTP: &namespace.HTTPCheck{URL: "https://example.com/.well-known/mcp-registry-auth", Status: 200, Found: true,
				Proofs: []namespace.Proof{{Algorithm: "ecdsap384", Key: p384Key(), Valid: true}}},
			DNS: []namespace.DNSCheck{{Name: "example.com", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Found: true}}}},
		{"com.example.redirect", namespace.Result{Method: "dns", Methods: []string{"dns"},
			HTTP: &namespace.HTTPCheck{URL: "https://redirect.example.com/.well-known/mcp-registry-auth", Status: 302, Class: "redirect_limit"},
			DNS: []namespace.DNSCheck{{Name: "redirect.example.com"},
				{Name: "example.com", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Found: true, CoversSubdomains: true}}}},
		{"com.example.big", namespace.Result{Method: "dns", Methods: []string{"dns"},
			HTTP: &namespace.HTTPCheck{URL: "https://big.example.com/.well-known/mcp-registry-auth", Status: 200, Class: "too_large"},
			DNS: []namespace.DNSCheck{{Name: "big.example.com"},
				{Name: "example.com", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Found: true, CoversSubdomains: true}}}},
		{"com.example.bad", namespace.Result{Method: "dns", Methods: []string{"dns"},
			HTTP: &namespace.HTTPCheck{URL: "https://bad.example.com/.well-known/mcp-registry-auth", Status: 404, Class: "http_404"},
			DNS: []namespace.DNSCheck{
				{Name: "bad.example.com", Records: []string{"v=MCPv1; k=ed25519; p=AAAA"}, Proofs: []namespace.Proof{{Algorithm: "ed25519", Key: "AAAA", Problem: "ed25519 key is 3 bytes, want 32"}}},
				{Name: "example.com", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Found: true, CoversSubdomains: true}}}},
		{"com.example.many", namespace.Result{Method: "http", Methods: []string{"http", "dns"},
			HTTP: &namespace.HTTPCheck{URL: "https://many.example.com/.well-known/mcp-registry-auth", Status: 200, Found: true,
				Proofs: append([]namespace.Proof{ed}, slices.Repeat([]namespace.Proof{badProof}, 7)...), ProofsMore: 4},
			DNS: []namespace.DNSCheck{{Name: "many.example.com", Found: true,
				Records: append([]string{long[:256] + "…"}, slices.Repeat([]string{bad}, 7)...), RecordsMore: 2,
				Proofs: append([]namespace.Proof{ed}, slices.Repeat([]namespace.Proof{badProof}, 7)...), ProofsMore: 2},
				{Name: "example.com", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Found: true, CoversSubdomains: true}}}},
		{"net.example", namespace.Result{Method: "none",
			HTTP: &namespace.HTTPCheck{URL: "https://example.net/.well-known/mcp-registry-auth", Class: "tls"},
			DNS: []namespace.DNSCheck{{Name: "example.net"},
				{Name: "_mcp-auth.example.net", Records: []string{edRecord}, Proofs: []namespace.Proof{ed}, Misplaced: true}}}},
		{"org.example", namespace.Result{Method: "none",
			HTTP: &namespace.HTTPCheck{URL: "https://example.org/.well-known/mcp-registry-auth", Class: "tls"},
			DNS:  []namespace.DNSCheck{{Name: "example.org"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			tt.want.Namespace = namespace.Classify(tt.ns)
			got := c.Check(context.Background(), namespace.Classify(tt.ns), nil)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(namespace.HTTPCheck{}, "Error")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if h := got.HTTP; h != nil && !h.Found && h.Error == "" {
				t.Errorf("failed HTTP check without an error message: %+v", h)
			}
		})
	}
}

func TestRunKeepsEarlierChecks(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "n.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"com.example/a","version":"1"}`},
		{Name: "io.github.octo/b", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"io.github.octo/b","version":"1","repository":{"url":"https://github.com/octo/b","source":"github"}}`},
	}}); err != nil {
		t.Fatal(err)
	}
	resolver := dnsServer(t, map[string][]string{"example.com.": {"v=MCPv1; k=ed25519; p=" + edKey()}})
	now := func() string { return "2026-07-01T00:00:00.000000000Z" }
	if _, err := namespace.Run(ctx, db, namespace.RunOptions{Checker: namespace.NewChecker(namespace.Options{Resolver: resolver}), Now: now}); err != nil {
		t.Fatal(err)
	}
	// An offline pass afterwards must not erase the DNS finding.
	if _, err := namespace.Run(ctx, db, namespace.RunOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type short struct{ Namespace, Kind, Domain, Method, CheckedAt string }
	var got []short
	for _, r := range rows {
		got = append(got, short{r.Namespace, r.Kind, r.Domain, r.Method, r.CheckedAt})
	}
	want := []short{
		{"com.example", "domain", "example.com", "dns", "2026-07-01T00:00:00.000000000Z"},
		{"io.github.octo", "github", "", "github", "2026-07-01T00:00:00.000000000Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored namespaces (-want +got):\n%s", diff)
	}
	if !strings.Contains(rows[1].Result, `"sameAccount":1`) {
		t.Errorf("github result %s lacks the repository check", rows[1].Result)
	}
}

// countingNet records every HTTP fetch and TXT lookup a check makes.
type countingNet struct {
	mu    sync.Mutex
	calls []string
}

func (c *countingNet) Get(_ context.Context, r fetch.Request) *fetch.Response {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "GET "+r.URL)
	return &fetch.Response{Status: 404, Class: fetch.ClassHTTP404}
}

func (c *countingNet) LookupTXT(_ context.Context, name string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "TXT "+name)
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func TestCheckInvalidNamespaceStaysOffline(t *testing.T) {
	n := &countingNet{}
	c := namespace.NewChecker(namespace.Options{HTTP: n, Resolver: n})
	for _, ns := range []string{"com.example@evil", "com.example:8443"} {
		r := c.Check(context.Background(), namespace.Classify(ns), nil)
		if r.Kind != namespace.KindInvalid || r.Method != namespace.MethodNone || r.HTTP != nil || r.DNS != nil {
			t.Errorf("Check(%q) = %+v", ns, r)
		}
	}
	if len(n.calls) != 0 {
		t.Errorf("network calls for invalid namespaces: %q", n.calls)
	}
}

// scriptedNet answers HTTP proofs and TXT lookups from fields the test
// changes between runs.
type scriptedNet struct {
	mu     sync.Mutex
	status int
	class  string
	body   string
	txt    []string
	txtErr error
}

func (s *scriptedNet) Get(_ context.Context, r fetch.Request) *fetch.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &fetch.Response{Status: s.status, Class: s.class, Body: []byte(s.body)}
	if s.class != "" {
		resp.Err = errors.New("failed: " + s.class)
	}
	return resp
}

func (s *scriptedNet) LookupTXT(_ context.Context, name string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != "example.com" {
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return s.txt, s.txtErr
}

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "n.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRunKeepsOutcomeOnTransientFailure: a timeout or a 5xx on re-check
// does not overwrite a key found earlier; a definitive answer does.
func TestRunKeepsOutcomeOnTransientFailure(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"com.example/a","version":"1"}`},
	}}); err != nil {
		t.Fatal(err)
	}
	n := &scriptedNet{status: 200, body: "v=MCPv1; k=ed25519; p=" + edKey(), txt: []string{"v=MCPv1; k=ed25519; p=" + edKey()}}
	stamp := "t1"
	run := func() namespace.Result {
		t.Helper()
		sum, err := namespace.Run(ctx, db, namespace.RunOptions{Checker: namespace.NewChecker(namespace.Options{HTTP: n, Resolver: n}),
			Now: func() string { return stamp }})
		rows, _ := db.Namespaces(ctx)
		if err != nil || sum.Namespaces != 1 || len(rows) != 1 {
			t.Fatalf("Run = %+v, %v; stored %+v", sum, err, rows)
		}
		var r namespace.Result
		if err := json.Unmarshal([]byte(rows[0].Result), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(); r.Method != "http" || !slices.Equal(r.Methods, []string{"http", "dns"}) {
		t.Fatalf("first check = %+v", r)
	}
	stamp = "t2"
	n.status, n.class, n.body = 503, fetch.ClassHTTP5xx, ""
	n.txt, n.txtErr = nil, &net.DNSError{Err: "server misbehaving", Name: "example.com", IsTemporary: true}
	r := run()
	if r.Method != "http" || !slices.Equal(r.Methods, []string{"http", "dns"}) {
		t.Errorf("after transient failures: method %q %v, want the earlier http and dns kept", r.Method, r.Methods)
	}
	if r.HTTP == nil || !r.HTTP.Found || r.HTTP.KeptFrom != "t1" || !strings.Contains(r.HTTP.RecheckError, "http_5xx") {
		t.Errorf("http = %+v, want the t1 outcome with the re-check failure", r.HTTP)
	}
	if len(r.DNS) != 1 || !r.DNS[0].Found || r.DNS[0].KeptFrom != "t1" || !strings.Contains(r.DNS[0].RecheckError, "server misbehaving") {
		t.Errorf("dns = %+v, want the t1 outcome with the re-check failure", r.DNS)
	}
	rows, _ := db.Namespaces(ctx)
	if len(rows) != 1 || rows[0].Method != "http" || rows[0].CheckedAt != "t2" {
		t.Errorf("stored = %+v", rows)
	}
	// Definitive answers: the key is gone from both places.
	stamp = "t3"
	n.status, n.class = 404, fetch.ClassHTTP404
	n.txt, n.txtErr = []string{"v=spf1 -all"}, nil
	if r := run(); r.Method != "none" || r.HTTP.KeptFrom != "" || r.DNS[0].KeptFrom != "" {
		t.Errorf("after definitive answers = %+v, want method none and nothing kept", r)
	}
}

// TestRunRemovesNamespacesNoLongerNamed: a namespace whose only card is no
// longer listed by any domain leaves the table.
func TestRunRemovesNamespacesNoLongerNamed(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	for _, q := range []string{
		`INSERT INTO domains (domain, added_at, state) VALUES ('a.example', 'now', 'done')`,
		`INSERT INTO cards (key, sha256, name, grade, json, first_seen, last_seen, changed_at) VALUES
			('https://a.example/card', 'x', 'org.example/x', 'conformant', '{"name":"org.example/x"}', 'now', 'now', 'now')`,
		`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, first_seen, last_seen) VALUES
			('a.example', 'https://a.example/c', 'i', 'https://a.example/card', '', 'now', 'now')`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: []store.RegistryEntry{
		{Name: "io.github.octo/b", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"io.github.octo/b","version":"1"}`},
	}}); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		t.Helper()
		if _, err := namespace.Run(ctx, db, namespace.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Namespaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Namespace)
		}
		return out
	}
	if diff := cmp.Diff([]string{"io.github.octo", "org.example"}, names()); diff != "" {
		t.Errorf("before (-want +got):\n%s", diff)
	}
	if _, err := db.SQL().Exec(`UPDATE listings SET active = 0`); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"io.github.octo"}, names()); diff != "" {
		t.Errorf("after the card's listing was retired (-want +got):\n%s", diff)
	}
}

// TestCheckTXTNames: lookups walk parents nearest first, at most four,
// the last one the registrable domain, never a public suffix; when none
// holds a record, the two names a proof is often misplaced at follow.
func TestCheckTXTNames(t *testing.T) {
	tests := []struct {
		ns   string
		want []string
	}{
		{"com.example", []string{"TXT example.com", "TXT _mcp-auth.example.com", "TXT _mcp-registry.example.com"}},
		{"uk.co.example.shop", []string{"TXT shop.example.co.uk", "TXT example.co.uk",
			"TXT _mcp-auth.shop.example.co.uk", "TXT _mcp-registry.shop.example.co.uk"}},
		{"com.example.a.b.c.d.e", []string{"TXT e.d.c.b.a.example.com", "TXT d.c.b.a.example.com", "TXT c.b.a.example.com",
			"TXT b.a.example.com", "TXT example.com", "TXT _mcp-auth.e.d.c.b.a.example.com", "TXT _mcp-registry.e.d.c.b.a.example.com"}},
		{"io.github", nil}, // github.io is a public suffix
		{"uk.co", nil},     // so is co.uk
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			n := &countingNet{}
			namespace.NewChecker(namespace.Options{Resolver: n}).Check(context.Background(), namespace.Classify(tt.ns), nil)
			if diff := cmp.Diff(tt.want, n.calls); diff != "" {
				t.Errorf("lookups (-want +got):\n%s", diff)
			}
		})
	}
}

// gatedNet holds every HTTP check until limit of them are in flight at
// once, recording the most seen; a strictly sequential Run would never
// open the gate and fail at the test's deadline.
type gatedNet struct {
	mu             sync.Mutex
	inFlight, most int
	limit          int
	open           chan struct{}
	opened         bool
}

func (g *gatedNet) Get(ctx context.Context, r fetch.Request) *fetch.Response {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.inFlight == g.limit && g.most == g.limit && !g.opened {
		g.opened = true
		close(g.open)
	}
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.inFlight--; g.mu.Unlock() }()
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return &fetch.Response{Status: 404, Class: fetch.ClassHTTP404}
}

func TestRunChecksConcurrently(t *testing.T) {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Second))
		defer cancel()
	}
	db := openDB(t)
	var entries []store.RegistryEntry
	for i := range 20 {
		name := fmt.Sprintf("com.example%02d/x", i)
		entries = append(entries, store.RegistryEntry{Name: name, Version: "1", ReportedLatest: true, ServerJSON: `{"name":"` + name + `","version":"1"}`})
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: entries}); err != nil {
		t.Fatal(err)
	}
	g := &gatedNet{limit: 8, open: make(chan struct{})}
	res, err := namespace.Run(ctx, db, namespace.RunOptions{Checker: namespace.NewChecker(namespace.Options{HTTP: g}), Concurrency: 8})
	if err != nil || res.Namespaces != 20 || res.Checked != 20 {
		t.Fatalf("Run = %+v, %v; want 20 namespaces checked", res, err)
	}
	if g.most != 8 {
		t.Errorf("at most %d checks in flight, want 8", g.most)
	}
}

// TestCollectGroupsAcrossCardsAndEntries: a namespace named by cards and by
// Registry entries is one subject, even when another namespace's names
// sort between them in the stream ("com.example.sub/…" < "com.example/…").
func TestCollectGroupsAcrossCardsAndEntries(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	for _, q := range []string{
		`INSERT INTO domains (domain, added_at, state) VALUES ('a.example', 'now', 'done'), ('c.example', 'now', 'done')`,
		`INSERT INTO cards (key, sha256, name, grade, json, first_seen, last_seen, changed_at) VALUES
			('https://a.example/card', 'x', 'com.example/a', 'conformant', '{"name":"com.example/a","repository":{"url":"https://github.com/e/a"}}', 'now', 'now', 'now'),
			('https://c.example/card', 'x', 'com.example/c', 'conformant', '{"name":"com.example/c"}', 'now', 'now', 'now'),
			('https://c.example/octo', 'x', 'io.github.octo/x', 'conformant', '{"name":"io.github.octo/x","repository":{"url":"https://github.com/octo/x"}}', 'now', 'now', 'now')`,
		`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, first_seen, last_seen) VALUES
			('a.example', 'https://a.example/c', 'i', 'https://a.example/card', '', 'now', 'now'),
			('c.example', 'https://c.example/c', 'i', 'https://c.example/card', '', 'now', 'now'),
			('c.example', 'https://c.example/c', 'j', 'https://c.example/octo', '', 'now', 'now')`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: []store.RegistryEntry{
		{Name: "com.example/b", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"com.example/b","version":"1"}`},
		// A name a card holds too counts once.
		{Name: "com.example/a", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"com.example/a","version":"1"}`},
		{Name: "com.example.sub/z", Version: "1", ReportedLatest: true, ServerJSON: `{"name":"com.example.sub/z","version":"1"}`},
		{Name: "io.github.octo/y", Version: "1", ReportedLatest: true,
			ServerJSON: `{"name":"io.github.octo/y","version":"1","repository":{"url":"https://github.com/octo/y"}}`},
	}}); err != nil {
		t.Fatal(err)
	}
	got, err := namespace.Collect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	type short struct {
		Name  string
		Names int
		Repos []string
	}
	var names []short
	for _, s := range got {
		names = append(names, short{s.Namespace.Name, s.Names, s.RepoURLs})
	}
	// Repositories verify an io.github namespace only, so only its are
	// read.
	want := []short{
		{"com.example.sub", 1, []string{}},
		{"com.example", 3, []string{}},
		{"io.github.octo", 2, []string{"https://github.com/octo/x", "https://github.com/octo/y"}},
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
}
