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
	} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
	if code := run(context.Background(), []string{"--help"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("--help exit %d, want 0", code)
	}
}

// TestServesDemoToAUserClient runs the command as a user would and follows
// its printed instructions: trust the CA file, send every host to the port.
func TestServesDemoToAUserClient(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	domainsFile := filepath.Join(dir, "domains.txt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--ca-out", caFile, "--demo", "--generate", "3",
			"--mcp-share", "0", "--domains-out", domainsFile}, pw, io.Discard)
		_ = pw.Close()
	}()

	var connectTo, caCert string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "--connect-to "); ok {
			connectTo = v
		}
		if v, ok := strings.CutPrefix(line, "--ca-cert "); ok {
			caCert = v
		}
		if strings.HasPrefix(line, "Ctrl-C") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
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
	if len(lines) != 15+3 || lines[0] != "forge.example" || !strings.HasSuffix(lines[17], ".example") {
		t.Errorf("domains file: %q", lines)
	}

	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after interrupt, want 0", code)
	}
}
