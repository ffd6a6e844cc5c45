package discover_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// robotsWeb: hosts whose robots.txt disallows the catalog, allows cardcrawl
// what it denies everyone else, gates a card on another host, is missing,
// answers 503, or never answers.
var robotsWeb = []byte(`
-- deny.example/robots.txt --
User-agent: *
Disallow: /.well-known/
-- deny.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
-- ours.example/robots.txt --
User-agent: *
Disallow: /

User-agent: CardCrawl
Allow: /.well-known/ai-catalog.json
Disallow: /
-- ours.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:ours.example:mcp:open","type":"application/mcp-server-card+json","url":"https://cardhost.example/open/card.json"},{"identifier":"urn:air:ours.example:mcp:closed","type":"application/mcp-server-card+json","url":"https://cardhost.example/closed/card.json"}]}
-- cardhost.example/robots.txt --
HTTP 200
ETag: "r1"

User-agent: *
Disallow: /closed/
-- cardhost.example/open/card.json --
{"name":"com.example/open","version":"1.0.0","description":"Open","remotes":[{"type":"streamable-http","url":"https://open.example/mcp"}]}
-- cardhost.example/closed/card.json --
{"name":"com.example/closed","version":"1.0.0","description":"Closed","remotes":[{"type":"streamable-http","url":"https://closed.example/mcp"}]}
-- again.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:again.example:mcp:open","type":"application/mcp-server-card+json","url":"https://cardhost.example/open/card.json"},{"identifier":"urn:air:again.example:mcp:closed","type":"application/mcp-server-card+json","url":"https://cardhost.example/closed/card.json"}]}
-- later.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:later.example:mcp:open","type":"application/mcp-server-card+json","url":"https://cardhost.example/open/card.json"},{"identifier":"urn:air:later.example:mcp:closed","type":"application/mcp-server-card+json","url":"https://cardhost.example/closed/card.json"}]}
-- norobots.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:norobots.example:mcp:also","type":"application/mcp-server-card+json","url":"https://cardhost.example/open/card.json"}]}
-- down.example/robots.txt --
HTTP 503

-- down.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
-- hang.example/robots.txt --
HTTP 200
Simweb-Behavior: stall

User-agent: *
-- hang.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
`)

func TestRobots(t *testing.T) {
	w := newWorld(t, robotsWeb)
	opts := w.options()
	opts.Robots = true
	domains := []string{"deny.example", "ours.example", "norobots.example", "down.example", "hang.example"}
	w.crawl(context.Background(), opts, domains...)

	got := w.outcomes()
	want := map[string]outcome{
		"deny.example":     {"failed", "robots", 0, 0},
		"ours.example":     {"catalog", "", 1, 1},
		"norobots.example": {"catalog", "", 1, 1},
		"down.example":     {"failed", "http_5xx", 0, 0},
		"hang.example":     {"failed", "timeout", 0, 0},
	}
	for d := range got {
		if _, ok := want[d]; !ok {
			delete(got, d)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if c := w.observationClasses("ours.example", "card"); c["https://cardhost.example/closed/card.json"] != "robots" ||
		c["https://cardhost.example/open/card.json"] != "" {
		t.Errorf("ours.example's card fetches: %v", c)
	}
	if c := w.observationClasses("deny.example", "catalog"); c["https://deny.example/.well-known/ai-catalog.json"] != "robots" {
		t.Errorf("deny.example's catalog fetch: %v", c)
	}

	// A document robots.txt keeps out is asked for again a day later, as
	// a miss is; one behind a file that answered 503, an hour later.
	next := func(domain string) time.Time {
		t.Helper()
		var at string
		if err := w.store.SQL().QueryRow(`SELECT next_fetch_after FROM domains WHERE domain = ?`, domain).Scan(&at); err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	if d := next("deny.example").Sub(next("down.example")); d < 20*time.Hour {
		t.Errorf("deny.example is due %v after down.example, want about a day", d)
	}

	// Nothing robots.txt keeps out, or gates behind an unreachable file,
	// was asked for; each host's robots.txt was asked for once, with
	// cardcrawl's User-Agent, though two domains list cardhost's cards.
	robotsAsked := map[string]int{}
	for _, r := range w.web.Requests("") {
		if r.Path == "/robots.txt" {
			robotsAsked[r.Host]++
			if !strings.HasPrefix(r.UserAgent, "cardcrawl/") {
				t.Errorf("robots.txt of %s asked for as %q", r.Host, r.UserAgent)
			}
			continue
		}
		switch {
		case r.Host == "deny.example", r.Host == "down.example", r.Host == "hang.example",
			r.Host == "cardhost.example" && strings.HasPrefix(r.Path, "/closed/"):
			t.Errorf("fetched %s%s, which robots.txt keeps out", r.Host, r.Path)
		}
	}
	wantAsked := map[string]int{"deny.example": 1, "ours.example": 1, "cardhost.example": 1, "norobots.example": 1,
		"down.example": 1, "hang.example": 1}
	if diff := cmp.Diff(wantAsked, robotsAsked); diff != "" {
		t.Errorf("robots.txt requests by host (-want +got):\n%s", diff)
	}
	// The fetch of each robots.txt is recorded, with the domain that made it.
	var robotsObs int
	if err := w.store.SQL().QueryRow(`SELECT COUNT(*) FROM observations WHERE kind = 'robots'`).Scan(&robotsObs); err != nil {
		t.Fatal(err)
	}
	if robotsObs != len(wantAsked) {
		t.Errorf("%d robots.txt observations, want %d", robotsObs, len(wantAsked))
	}
}

// TestRobotsRemembered: a later run uses a robots.txt answer from the
// store for a day after it was fetched, when it was a file or none; a file
// that answered 503 is asked for again, and so is any file a day later
// (conditionally), or with --force.
func TestRobotsRemembered(t *testing.T) {
	w := newWorld(t, robotsWeb)
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	crawlAt := func(at time.Time, force bool, domains ...string) {
		t.Helper()
		opts := w.options()
		opts.Robots, opts.Force = true, force
		opts.Now = func() time.Time { return at }
		w.crawl(context.Background(), opts, domains...)
	}
	asked := func() map[string]int {
		n := map[string]int{}
		for _, r := range w.web.Requests("") {
			if r.Path == "/robots.txt" {
				n[r.Host]++
			}
		}
		return n
	}

	crawlAt(start, false, "ours.example", "norobots.example", "down.example")
	// Two hours on: down.example is due again; cardhost's file and
	// norobots' missing one are still answers.
	crawlAt(start.Add(2*time.Hour), false, "again.example", "down.example")
	want := map[string]int{"ours.example": 1, "cardhost.example": 1, "norobots.example": 1, "down.example": 2,
		"again.example": 1}
	if diff := cmp.Diff(want, asked()); diff != "" {
		t.Errorf("robots.txt requests by host after two runs (-want +got):\n%s", diff)
	}
	if c := w.observationClasses("again.example", "card"); c["https://cardhost.example/open/card.json"] != "" ||
		c["https://cardhost.example/closed/card.json"] != "robots" {
		t.Errorf("again.example's card fetches: %v, want cardhost's stored rules obeyed", c)
	}
	for _, r := range w.web.Requests("cardhost.example") {
		if strings.HasPrefix(r.Path, "/closed/") {
			t.Errorf("fetched cardhost.example%s, which its stored robots.txt keeps out", r.Path)
		}
	}

	// A day after cardhost's file was fetched, it is asked for again, with
	// its ETag; the 304 confirms the stored rules, which still apply.
	crawlAt(start.Add(25*time.Hour), false, "later.example")
	want["cardhost.example"], want["later.example"] = 2, 1
	if diff := cmp.Diff(want, asked()); diff != "" {
		t.Errorf("robots.txt requests by host a day later (-want +got):\n%s", diff)
	}
	var revalidated []string
	for _, r := range w.web.Requests("cardhost.example") {
		if r.Path == "/robots.txt" {
			revalidated = append(revalidated, r.IfNoneMatch)
		}
	}
	if diff := cmp.Diff([]string{"", `"r1"`}, revalidated); diff != "" {
		t.Errorf("If-None-Match of cardhost's robots.txt requests (-want +got):\n%s", diff)
	}
	if c := w.observationClasses("later.example", "card"); c["https://cardhost.example/closed/card.json"] != "robots" {
		t.Errorf("later.example's card fetches: %v, want the closed card kept out after the 304", c)
	}

	// --force asks again at once.
	crawlAt(start.Add(26*time.Hour), true, "later.example")
	want["cardhost.example"], want["later.example"] = 3, 2
	if diff := cmp.Diff(want, asked()); diff != "" {
		t.Errorf("robots.txt requests by host with --force (-want +got):\n%s", diff)
	}
}

// TestRobotsOff: without the option, robots.txt is neither read nor obeyed.
func TestRobotsOff(t *testing.T) {
	w := newWorld(t, robotsWeb)
	w.crawl(context.Background(), w.options(), "deny.example")
	if got := w.outcomes()["deny.example"]; got.Outcome != "catalog" {
		t.Errorf("deny.example: %+v, want a catalog", got)
	}
	for _, r := range w.web.Requests("deny.example") {
		if r.Path == "/robots.txt" {
			t.Error("robots.txt was asked for")
		}
	}
}

// TestRobotsFollowsUserAgent: the group that applies is the one named by
// the first word of the User-Agent the crawl sends.
func TestRobotsFollowsUserAgent(t *testing.T) {
	w := newWorld(t, []byte(`
-- named.example/robots.txt --
User-agent: examplebot
Disallow: /
-- named.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[]}
`))
	ct, err := fetch.ParseConnectTo(w.web.ConnectTo())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ua, want string }{
		{"", "catalog"}, // cardcrawl's: no group names it
		{"ExampleBot/2.0 (+https://example.org/bot)", "failed"},
	} {
		c, err := fetch.New(fetch.Options{ConnectTo: []fetch.ConnectTo{ct}, RootCAs: w.web.CertPool(),
			Timeout: 2 * time.Second, RetryWait: -1, UserAgent: tc.ua})
		if err != nil {
			t.Fatal(err)
		}
		opts := w.options()
		opts.Fetch, opts.Robots, opts.Force = c, true, true
		w.crawl(context.Background(), opts, "named.example")
		if got := w.outcomes()["named.example"].Outcome; got != tc.want {
			t.Errorf("User-Agent %q: %s, want %s", tc.ua, got, tc.want)
		}
	}
}
