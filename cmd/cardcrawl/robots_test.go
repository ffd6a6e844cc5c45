package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestCrawlRobotsFlag: crawl --robots leaves out what robots.txt
// disallows; without it the same domain is crawled.
func TestCrawlRobotsFlag(t *testing.T) {
	web, ca, dir := fixtureWeb(t, `
-- closed.example/robots.txt --
User-agent: *
Disallow: /
-- closed.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
`)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--robots"}, "failed/robots"},
		{nil, "catalog/"},
	} {
		db := filepath.Join(dir, tc.want[:6]+".db")
		args := append([]string{"crawl", "--db", db, "--connect-to", web.ConnectTo(), "--ca-cert", ca, "--probe", "never"},
			tc.flags...)
		if code, _, stderr := run(t, "", append(args, "closed.example")...); code != exitOK {
			t.Fatalf("crawl %v: exit %d: %s", tc.flags, code, stderr)
		}
		code, stdout, _ := run(t, "", "domains", "--db", db, "--json")
		var domains []store.DomainRow
		if err := json.Unmarshal([]byte(stdout), &domains); code != exitOK || err != nil || len(domains) != 1 {
			t.Fatalf("domains --json: exit %d, %v, %q", code, err, stdout)
		}
		if diff := cmp.Diff(tc.want, domains[0].Outcome+"/"+domains[0].Class); diff != "" {
			t.Errorf("crawl %v (-want +got):\n%s", tc.flags, diff)
		}
	}
}
