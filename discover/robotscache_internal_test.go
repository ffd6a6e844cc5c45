package discover

import (
	"fmt"
	"testing"
)

// TestRobotsCacheKeepsRecentHosts: past maxRobotsHosts the least recently
// used host is forgotten, so a host in use all along stays; an entry
// forgotten after an interrupted read is claimed afresh.
func TestRobotsCacheKeepsRecentHosts(t *testing.T) {
	c := newRobotsCache("cardcrawl/1 (+https://example.org)")
	if c.token != "cardcrawl" {
		t.Fatalf("token %q", c.token)
	}
	popular, mine := c.claim("https://cards.example")
	if !mine {
		t.Fatal("a new host's entry was not the caller's to fill")
	}
	for i := range maxRobotsHosts {
		if _, mine := c.claim(fmt.Sprintf("https://d%d.example", i)); !mine {
			t.Fatalf("host %d: not new", i)
		}
		if e, mine := c.claim("https://cards.example"); mine || e != popular {
			t.Fatalf("after %d hosts the host in use was forgotten", i+1)
		}
	}
	if len(c.entries) != maxRobotsHosts || c.recent.Len() != maxRobotsHosts {
		t.Errorf("%d entries, %d in order, want %d", len(c.entries), c.recent.Len(), maxRobotsHosts)
	}
	if _, mine := c.claim("https://d0.example"); !mine {
		t.Error("the least recently used host was kept")
	}
	c.forget(popular)
	if e, mine := c.claim("https://cards.example"); !mine || e == popular {
		t.Error("a forgotten entry was handed out again")
	}
}
