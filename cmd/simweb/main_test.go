package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--no-such-flag"},
		{"--demo", "extra"},
		{"--generate", "5", "--catalog-share", "2", "--addr", "127.0.0.1:0", "--ca-out", filepath.Join(t.TempDir(), "ca.pem")},
		{"--generate", "5", "--hang-share", "0.6", "--refuse-share", "0.6", "--addr", "127.0.0.1:0", "--ca-out", filepath.Join(t.TempDir(), "ca.pem")},
		{"--generate", "5", "--latency", "-1s", "--addr", "127.0.0.1:0", "--ca-out", filepath.Join(t.TempDir(), "ca.pem")},
	} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
	if code := run(context.Background(), []string{"--help"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("--help exit %d, want 0", code)
	}
}

// serve runs the command until stop is called, and returns what it printed
// before "Ctrl-C to stop." and stop, which returns the exit code.
func serve(t *testing.T, args ...string) (printed []string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, pw, io.Discard)
		_ = pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		printed = append(printed, line)
		if strings.HasPrefix(line, "Ctrl-C") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var code *int
	stop = func() int {
		if code == nil {
			cancel()
			c := <-done
			code = &c
		}
		return *code
	}
	t.Cleanup(func() { stop() })
	return printed, stop
}

// flagValue finds "--name VALUE" on a line of its own.
func flagValue(printed []string, name string) string {
	for _, line := range printed {
		if v, ok := strings.CutPrefix(line, "--"+name+" "); ok {
			return v
		}
	}
	return ""
}

// TestServesDemoToAUserClient runs the command as a user would and follows
// its printed instructions: trust the CA file, send every host to the port.
func TestServesDemoToAUserClient(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	domainsFile := filepath.Join(dir, "domains.txt")
	printed, stop := serve(t, "--addr", "127.0.0.1:0", "--ca-out", caFile, "--demo", "--generate", "3",
		"--mcp-share", "0", "--domains-out", domainsFile)
	connectTo, caCert := flagValue(printed, "connect-to"), flagValue(printed, "ca-cert")
	if connectTo == "" || caCert != caFile {
		t.Fatalf("printed --connect-to %q, --ca-cert %q (want %q)", connectTo, caCert, caFile)
	}

	pemBytes, err := os.ReadFile(caCert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in the CA file")
	}
	target := strings.TrimPrefix(connectTo, "::")
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, target)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	resp, err := c.Get("https://forge.example/.well-known/ai-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("forge.example catalog: %d", resp.StatusCode)
	}

	domains, err := os.ReadFile(domainsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(domains)), "\n")
	if len(lines) != 16+3 || lines[0] != "forge.example" || !strings.HasSuffix(lines[18], ".example") {
		t.Errorf("domains file: %q", lines)
	}

	if flagValue(printed, "dns-server") != "" {
		t.Errorf("a DNS server was started unasked: %q", printed)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit %d after interrupt, want 0", code)
	}
}

// TestPrintsDNSServerAndLimit: with names that do not resolve, simweb
// answers DNS and prints the flag a crawl needs, and with latency it prints
// the network limit.
func TestPrintsDNSServerAndLimit(t *testing.T) {
	dir := t.TempDir()
	domainsFile := filepath.Join(dir, "domains.txt")
	printed, _ := serve(t, "--addr", "127.0.0.1:0", "--ca-out", filepath.Join(dir, "ca.pem"), "--generate", "40",
		"--mcp-share", "0", "--catalog-share", "1", "--cards", "1", "--latency", "100ms", "--unresolvable-share", "0.5",
		"--domains-out", domainsFile)
	dns := flagValue(printed, "dns-server")
	if dns == "" {
		t.Fatalf("no --dns-server printed:\n%s", strings.Join(printed, "\n"))
	}
	all := strings.Join(printed, "\n")
	// 20 or so resolvable domains, each a catalog and a card at 100 ms.
	if !strings.Contains(all, "network limit") || !strings.Contains(all, "longest 200ms") ||
		!strings.Contains(all, "--dns-server "+dns+" --domains "+domainsFile) {
		t.Errorf("printed:\n%s", all)
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, dns)
	}}
	domains, err := os.ReadFile(domainsFile)
	if err != nil {
		t.Fatal(err)
	}
	found, missing := 0, 0
	for _, d := range strings.Fields(string(domains)) {
		if _, err := r.LookupNetIP(context.Background(), "ip4", d+"."); err != nil {
			missing++
		} else {
			found++
		}
	}
	if found == 0 || missing == 0 {
		t.Errorf("%d names resolve and %d do not; want both", found, missing)
	}
}
