package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestCrawlWithDNSServer: --dns-server is asked even with --connect-to, so
// the names the simulated web says do not exist fail with class dns, and
// the others are crawled as before.
func TestCrawlWithDNSServer(t *testing.T) {
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names, err := web.Generate(simweb.GenerateOptions{Domains: 12, CatalogShare: 1, CardsPerCatalog: 1, Seed: 5, UnresolvableShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	dnsAddr, err := web.ServeDNS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "c.db")
	code, _, stderr := run(t, strings.Join(names, "\n"), "crawl", "--db", db, "--connect-to", web.ConnectTo(),
		"--ca-cert", ca, "--dns-server", dnsAddr, "--domains", "-", "--probe", "never")
	if code != exitOK {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	code, stdout, _ := run(t, "", "domains", "--db", db, "--json")
	var domains []store.DomainRow
	if err := json.Unmarshal([]byte(stdout), &domains); code != exitOK || err != nil {
		t.Fatalf("domains --json: exit %d, %v", code, err)
	}
	got := map[string]int{}
	for _, d := range domains {
		got[d.Outcome+"/"+d.Class]++
	}
	if len(domains) != len(names) || got["failed/dns"] == 0 || got["catalog/"] == 0 || got["failed/dns"]+got["catalog/"] != len(names) {
		t.Errorf("outcomes %v over %d domains; want some catalog/ and some failed/dns, nothing else", got, len(domains))
	}
}
