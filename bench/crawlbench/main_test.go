package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary be the launcher the harness starts
// measured processes from (runMeasured re-executes os.Executable()).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == launcherArg {
		os.Exit(launch(context.Background(), os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestSmoke runs the harness as BENCHMARKS.md does, on 200 domains: both
// binaries are built, the web is served, the crawl and the bare fetcher
// run against it, and the report is complete. No figure is judged: timing
// belongs to the benchmarks, not to the tests. With --together the two
// run at once and the report says so.
func TestSmoke(t *testing.T) {
	t.Run("one after the other", func(t *testing.T) { smoke(t, false) })
	t.Run("together", func(t *testing.T) { smoke(t, true) })
}

func smoke(t *testing.T, together bool) {
	var stdout, stderr strings.Builder
	args := []string{"--domains", "200", "--concurrency", "8", "--dir", t.TempDir(),
		"--latency", "1ms", "--unresolvable-share", "0.05", "--json"}
	if together {
		args = append(args, "--together")
	}
	code := run(context.Background(), args, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	var rs []Result
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rs = append(rs, r)
	}
	if len(rs) != 1 {
		t.Fatalf("got %d results, want 1:\n%s", len(rs), stdout.String())
	}
	r := rs[0]
	if r.Together != together {
		t.Errorf("together: %v, want %v", r.Together, together)
	}
	if r.Crawled != 200 || r.Cards == 0 {
		t.Errorf("crawl: %d domains crawled, %d cards; want 200 and some cards", r.Crawled, r.Cards)
	}
	if r.Bare == nil || r.BareRequests < 200 {
		t.Errorf("bare fetcher: %+v, %d requests; want at least one per domain", r.Bare, r.BareRequests)
	}
	if r.Crawl.CPUSeconds <= 0 || r.Crawl.MaxRSSKiB <= 0 || r.LimitSeconds <= 0 {
		t.Errorf("measure incomplete: %+v, limit %v", r.Crawl, r.LimitSeconds)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--concurrency", "0"}, {"--domains", "0"}, {"extra"}, {"--nope"}} {
		var out, errOut strings.Builder
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
