package discover_test

import (
	"context"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
)

// TestDomainTimeoutCutsAProbeTheClientWouldWaitOn: the domain's time limit
// is what ends a probe of a host that never answers, not the client's own
// per-request limit. The client here would wait ten minutes; the run is
// given a guard far shorter than that, so a probe outside the domain's
// limit shows as an interrupted run instead of a pass.
func TestDomainTimeoutCutsAProbeTheClientWouldWaitOn(t *testing.T) {
	w := newWorld(t, probeCapWeb)
	opts := w.options()
	// Long enough for the catalog on a loaded machine; the probe of the
	// silent server is what must use up the rest.
	opts.DomainTimeout = 2 * time.Second
	patient := clientFor(t, w.web, 10*time.Minute)
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: patient})}
	// A guard against a probe the domain's limit does not cover, not a
	// wait: with the limit working the crawl ends after two seconds.
	guard, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sum := w.crawl(guard, opts, "hangs.example")
	if sum.Interrupted || guard.Err() != nil {
		t.Fatal("the probe outlived the domain's time limit: the run was stopped by the guard")
	}
	var last string
	if err := w.store.SQL().QueryRow(`SELECT decision || ':' || reason FROM probe_decisions WHERE run_id = ? ORDER BY id DESC LIMIT 1`,
		sum.RunID).Scan(&last); err != nil || last != "skip:domain_timeout" {
		t.Errorf("last decision %q (%v), want the silent server cut by the domain's limit", last, err)
	}
}
