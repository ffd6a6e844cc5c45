package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/google/go-cmp/cmp"
)

func runOK(t *testing.T, stdin io.Reader, args ...string) report {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, stdin, &out, &errOut); code != exitOK {
		t.Fatalf("barefetch %q: exit %d: %s", args, code, errOut.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("output is not one JSON line (%v):\n%s", err, out.String())
	}
	return rep
}

func startWeb(t *testing.T) (*simweb.Web, string) {
	t.Helper()
	w, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := w.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return w, ca
}

func TestUsageErrors(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "missing.pem")
	for _, args := range [][]string{
		{},
		{"--no-such-flag", "a.example"},
		{"--client", "curl", "a.example"},
		{"--client", "net", "a.example"},
		{"--client", "net", "--connect-to", "a.example:443:127.0.0.1:1", "a.example"},
		{"--client", "net", "--connect-to", "::127.0.0.1:", "--connect-to", ":443::8443", "a.example"},
		{"--concurrency", "0", "a.example"},
		{"--timeout", "0s", "a.example"},
		{"--connect-to", "nonsense", "a.example"},
		{"--ca-cert", ca, "a.example"},
		{"--dns-server", "127.0.0.1", "a.example"},
		{"--domains", filepath.Join(t.TempDir(), "absent.txt")},
	} {
		var errOut bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &errOut); code != exitUsage ||
			strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("barefetch %q: exit %d, stderr %q; want 2 and one line", args, code, errOut.String())
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, nil, &out, io.Discard); code != exitOK || !strings.Contains(out.String(), "--client") {
		t.Errorf("--help: exit %d\n%s", code, out.String())
	}
}

// TestTheGETsACrawlMakes runs both clients over a generated web with
// failing hosts and checks the requests the Web saw: every catalog, then
// each listed card, with the crawl's Accept headers, one at a time per
// host, and failures in cardcrawl's classes.
func TestTheGETsACrawlMakes(t *testing.T) {
	for _, client := range []string{"fetch", "net"} {
		t.Run(client, func(t *testing.T) {
			w, ca := startWeb(t)
			opts := simweb.GenerateOptions{Domains: 40, CatalogShare: 0.5, CardsPerCatalog: 2, Seed: 4,
				UnresolvableShare: 0.15, RefuseShare: 0.15}
			names, err := w.Generate(opts)
			if err != nil {
				t.Fatal(err)
			}
			dns, err := w.ServeDNS("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			rep := runOK(t, strings.NewReader(strings.Join(names, "\n")+"\n"), "--client", client, "--concurrency", "8",
				"--connect-to", w.ConnectTo(), "--ca-cert", ca, "--dns-server", dns, "--domains", "-")

			limit, err := simweb.NetworkLimit(opts, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			catalogs := 0
			for _, r := range w.Requests("") {
				got = append(got, r.Method+" "+r.Host+r.Path+" "+r.Accept)
				if r.Path == "/.well-known/ai-catalog.json" {
					catalogs++
				}
			}
			if len(got) != limit.Responses {
				t.Errorf("the Web answered %d requests, want %d (the network limit's count)", len(got), limit.Responses)
			}
			failed := rep.Failures["dns"] + rep.Failures["connect"]
			if rep.Domains != 40 || rep.Requests != limit.Responses+failed || rep.OK != rep.Requests-failed-rep.Failures["http_404"] ||
				rep.CardURLs != len(got)-catalogs || rep.Failures["dns"] == 0 || rep.Failures["connect"] == 0 ||
				len(rep.Failures) != 3 || catalogs+failed != 40 {
				t.Errorf("report %+v; the Web saw %d catalog requests of %d", rep, catalogs, len(got))
			}
			sort.Strings(got)
			for _, line := range got {
				if !strings.HasPrefix(line, "GET ") ||
					(strings.Contains(line, "ai-catalog.json") != strings.HasSuffix(line, acceptCatalog)) ||
					(strings.Contains(line, "server-card") != strings.HasSuffix(line, acceptCard)) {
					t.Errorf("unexpected request %q", line)
				}
			}
			for _, d := range names {
				if n := w.MaxConcurrent(d); n > 1 {
					t.Errorf("%s: %d requests at once", d, n)
				}
			}
			if rep.CPUSeconds <= 0 || rep.WallSeconds <= 0 || rep.Client != client || rep.Concurrency != 8 {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

func TestCardURLs(t *testing.T) {
	body := []byte(`{"specVersion":"1.0","entries":[
		{"identifier":"a","type":"application/mcp-server-card+json","url":"/cards/a.json"},
		{"identifier":"b","mediaType":"application/mcp-server-card+json","url":"https://cards.example.org/b"},
		{"identifier":"c","type":"Application/MCP-Server-Card+JSON; charset=utf-8","url":"c.json"},
		{"identifier":"d","type":"application/mcp-server+json","url":"https://x.example/server.json"},
		{"identifier":"inline","type":"application/mcp-server-card+json","url":"https://x.example/i","data":{"name":"x"}},
		{"identifier":"nested","type":"application/ai-catalog+json","url":"https://x.example/nested.json"},
		{"identifier":"placeholder","type":"application/mcp-server-card+json","url":"https://{tenant}.example/card"},
		{"identifier":"nourl","type":"application/mcp-server-card+json"}
	]}`)
	want := []string{"https://one.example/cards/a.json", "https://cards.example.org/b", "https://one.example/dir/c.json",
		"https://x.example/server.json", "https://{tenant}.example/card"}
	if diff := cmp.Diff(want, cardURLs(body, "https://one.example/dir/catalog.json")); diff != "" {
		t.Errorf("card URLs (-want +got):\n%s", diff)
	}
	if got := cardURLs([]byte("<html>"), "https://one.example/"); got != nil {
		t.Errorf("not JSON: %q", got)
	}
	var many bytes.Buffer
	many.WriteString(`{"entries":[`)
	for i := range 1200 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`{"type":"application/mcp-server-card+json","url":"/c"}`)
	}
	many.WriteString(`]}`)
	if n := len(cardURLs(many.Bytes(), "https://one.example/")); n != maxCards {
		t.Errorf("%d card URLs from 1,200 entries, want the crawl's %d", n, maxCards)
	}
}

// TestStreamsStdin: a domain read from stdin is fetched before stdin
// closes, so a list of any length is never read whole first.
func TestStreamsStdin(t *testing.T) {
	w, ca := startWeb(t)
	asked := make(chan struct{}, 1)
	w.Handle("first.example", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		http.NotFound(rw, r)
	}))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--connect-to", w.ConnectTo(), "--ca-cert", ca, "--domains", "-"}, pr, &out, io.Discard)
	}()
	if _, err := io.WriteString(pw, "first.example\n"); err != nil {
		t.Fatal(err)
	}
	<-asked // before stdin closes
	_ = pw.Close()
	var rep report
	if code := <-done; code != exitOK || json.Unmarshal(out.Bytes(), &rep) != nil || rep.Domains != 1 || rep.Failures["http_404"] != 1 {
		t.Errorf("exit %d, report %s", code, out.String())
	}
}

func TestInterrupted(t *testing.T) {
	w, ca := startWeb(t)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	code := run(ctx, []string{"--connect-to", w.ConnectTo(), "--ca-cert", ca, "a.example", "b.example"}, nil, &out, io.Discard)
	var rep report
	if code != exitInterrupted || json.Unmarshal(out.Bytes(), &rep) != nil || !rep.Interrupted || rep.Requests != 0 {
		t.Errorf("exit %d, report %s; want 130 and nothing fetched", code, out.String())
	}
}
