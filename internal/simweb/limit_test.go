package simweb

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNetworkLimitByHand(t *testing.T) {
	l, err := NetworkLimit(GenerateOptions{Domains: 10, CatalogShare: 1, CardsPerCatalog: 2, Latency: 100 * time.Millisecond}, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := Limit{Domains: 10, Responses: 30, Total: 3 * time.Second, Longest: 300 * time.Millisecond}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("limit (-want +got):\n%s", diff)
	}
	for c, want := range map[int]time.Duration{0: 3 * time.Second, 1: 3 * time.Second, 4: 750 * time.Millisecond, 100: 300 * time.Millisecond} {
		if got := l.At(c); got != want {
			t.Errorf("At(%d) = %v, want %v", c, got, want)
		}
	}

	// Every domain hangs: each costs the timeout, and nothing is answered.
	l, err = NetworkLimit(GenerateOptions{Domains: 4, CatalogShare: 1, CardsPerCatalog: 2, Latency: time.Second, HangShare: 1}, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Limit{Domains: 4, Total: 60 * time.Second, Longest: 15 * time.Second}, l); diff != "" {
		t.Errorf("all hanging (-want +got):\n%s", diff)
	}
	// Failing fast costs nothing.
	l, err = NetworkLimit(GenerateOptions{Domains: 4, Latency: time.Second, RefuseShare: 0.5, UnresolvableShare: 0.5}, 15*time.Second)
	if err != nil || l.Total != 0 || l.Responses != 0 {
		t.Errorf("all refusing or unresolvable: %+v, %v; want nothing", l, err)
	}
	if _, err := NetworkLimit(GenerateOptions{HangShare: 2}, time.Second); err == nil {
		t.Error("bad options accepted")
	}
}

// TestNetworkLimitMatchesServedDelays fetches what a crawl fetches from a
// jittered web with slow handshakes, one connection per host, and checks
// that the delays the Web served add up to the limit's total.
func TestNetworkLimitMatchesServedDelays(t *testing.T) {
	opts := GenerateOptions{Domains: 60, CatalogShare: 0.4, CardsPerCatalog: 3, Seed: 11,
		Latency: 80 * time.Millisecond, Jitter: 60 * time.Millisecond, SlowTLSShare: 0.2, SlowTLSDelay: 700 * time.Millisecond}
	w, names, delays := delayedWeb(t, opts, false)
	c := w.Client()
	responses := 0
	for _, d := range names {
		cat := fetch(t, c, "https://"+d+"/.well-known/ai-catalog.json")
		responses++
		if cat.Status != 200 {
			continue
		}
		var doc struct{ Entries []struct{ URL string } }
		if err := json.Unmarshal([]byte(cat.Body), &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range doc.Entries {
			fetch(t, c, e.URL)
			responses++
		}
	}
	var served time.Duration
	for _, d := range delays() {
		served += d
	}
	l, err := NetworkLimit(opts, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != served || l.Responses != responses {
		t.Errorf("limit total %v over %d responses; the Web served %v over %d", l.Total, l.Responses, served, responses)
	}
}
