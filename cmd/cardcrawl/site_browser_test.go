package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/site"
	"github.com/cardcrawl/cardcrawl/store"
)

// chromium finds the browser the page tests drive: $CARDCRAWL_CHROMIUM, or
// Debian's chromium on PATH. Without one the test skips, unless
// CARDCRAWL_REQUIRE_CHROMIUM=1 (CI) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CARDCRAWL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (install Debian's chromium package, or set CARDCRAWL_CHROMIUM to a Chromium binary)"
	if os.Getenv("CARDCRAWL_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startChromium starts the browser before the test uses it, and once more
// if that fails: Debian's wrapper script has failed to start Chromium on a
// loaded machine, which says nothing of the pages. A second failure fails
// the test.
func startChromium(t *testing.T, ctx context.Context, browser, dir string) (context.Context, context.CancelFunc) {
	t.Helper()
	var err error
	for attempt := range 2 {
		alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
			chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.UserDataDir(filepath.Join(dir, fmt.Sprintf("chromium-%d", attempt))), chromedp.WindowSize(1200, 900))
		bctx, cancelBrowser := chromedp.NewContext(alloc)
		if err = chromedp.Do(bctx); err == nil {
			return bctx, func() { cancelBrowser(); cancelAlloc() }
		}
		cancelBrowser()
		cancelAlloc()
		t.Logf("chromium did not start (attempt %d): %v", attempt+1, err)
	}
	t.Fatalf("chromium did not start: %v", err)
	return nil, nil
}

// pageSize is small so that the demo's dozen servers take several pages.
const pageSize = 4

// TestPagesInBrowser crawls the simulated web (the demo: real catalogs,
// cards, a Registry, and go-sdk MCP servers probed for real), serves the
// result as `serve` does, and reads the pages in headless Chromium: every
// server is reachable by paging and by search, filters narrow the list,
// every link on every page resolves or leaves for an http(s) URL, and the
// browser reports no console error and no CSP violation. A screenshot of a
// server page at phone width is kept in $CARDCRAWL_SCREENSHOT_DIR (or the
// test's temporary directory).
func TestPagesInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "pages.db")
	if code, _, stderr := run(t, "", "demo", "--db", db); code != exitOK {
		t.Fatalf("demo exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := allServers(t, st)
	if len(want) < 2*pageSize {
		t.Fatalf("the demo has %d servers; the test needs more than two pages", len(want))
	}
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{
		Site:  site.Handler(site.Options{Store: st, PageSize: pageSize}),
		Store: st,
	}))
	defer srv.Close()

	bctx, cancelBrowser := startChromium(t, ctx, browser, dir)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 60*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var problems []string
	err = chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "warning" {
				problems = append(problems, fmt.Sprintf("console %s: %v", ev.Type, ev.Args))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			// CSP violations arrive here (source "security"), as do failed loads.
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning || ev.Entry.Source == cdplog.EntrySourceSecurity {
				problems = append(problems, fmt.Sprintf("log %s/%s: %s (%s)", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	b := &browserRun{t: t, ctx: bctx, base: srv.URL}

	// Paging: follow "Next page" from the first page to the last.
	b.do(chromedp.Navigate(srv.URL + "/"))
	var paged []string
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatal("paging does not end")
		}
		paged = append(paged, b.serverLinks()...)
		b.checkLinks()
		if !b.exists(`a[rel="next"]`) {
			break
		}
		b.follow(chromedp.Click(chromedp.CSS(`a[rel="next"]`)))
	}
	slices.Sort(paged)
	if !slices.Equal(paged, keys(want)) {
		t.Errorf("paging reached\n%v\nwant\n%v", paged, keys(want))
	}
	// The stylesheet loaded under the CSP (it is the page's only style).
	if bg := eval[string](b, `getComputedStyle(document.querySelector("header")).backgroundColor`); bg != "rgb(242, 244, 247)" {
		t.Errorf("header background %q: site.css did not apply", bg)
	}

	// Search: each server turns up when its name (or endpoint) is typed
	// into the form.
	// The form is used once; the other searches load its URL directly.
	for i, s := range want {
		term := s.Name
		if term == "" {
			term = s.URL
		}
		if i == 0 {
			b.do(chromedp.Navigate(srv.URL+"/?limit=100"), chromedp.SetValue(chromedp.CSS(`input[name="q"]`), term))
			b.follow(chromedp.Click(chromedp.CSS(`form.filters button`)))
		} else {
			b.do(chromedp.Navigate(srv.URL + "/?" + url.Values{"q": {term}, "limit": {"100"}}.Encode()))
		}
		if got := b.serverLinks(); !slices.Contains(got, site.ServerPath(s.SiteKey)) {
			t.Errorf("searching %q found %v, not %s", term, got, s.Subject)
		}
	}

	// Filters narrow the list, and every row left matches.
	for _, f := range []struct{ param, value, column string }{
		{"grade", "non_conformant", "td:nth-child(4)"},
		{"source", "registry", "td:nth-child(3)"},
		{"outcome", "ok", "td:nth-child(6)"},
	} {
		b.do(chromedp.Navigate(srv.URL+"/?limit=100"), chromedp.SetValue(chromedp.CSS(`select[name="`+f.param+`"]`), f.value))
		b.follow(chromedp.Click(chromedp.CSS(`form.filters button`)))
		if loc := eval[string](b, `location.href`); !strings.Contains(loc, f.param+"="+f.value) {
			t.Errorf("the form sent %s, without %s=%s", loc, f.param, f.value)
		}
		got := b.serverLinks()
		cells := eval[[]string](b, `[...document.querySelectorAll("table.servers tbody tr `+f.column+`")].map(td => td.textContent)`)
		if len(got) == 0 || len(got) >= len(want) {
			t.Errorf("filter %s=%s kept %d of %d servers", f.param, f.value, len(got), len(want))
		}
		for _, c := range cells {
			if f.param == "outcome" && c != "answered as an MCP server" || f.param != "outcome" && !strings.Contains(c, f.value) {
				t.Errorf("filter %s=%s kept a row showing %q", f.param, f.value, c)
			}
		}
	}

	// Every server's page, and the summary: links resolve, nothing logged.
	for _, s := range want {
		b.do(chromedp.Navigate(srv.URL + site.ServerPath(s.SiteKey)))
		if h1 := eval[string](b, `document.querySelector("h1").textContent`); h1 == "" {
			t.Errorf("server %s: no heading", s.Subject)
		}
		b.checkLinks()
	}
	b.do(chromedp.Navigate(srv.URL + "/summary"))
	b.checkLinks()
	if breakdown := eval[string](b, `document.querySelector("#failures").textContent`); !strings.Contains(breakdown, "answered as an MCP server") || !strings.Contains(breakdown, "HTTP 4xx error") {
		t.Errorf("the failure breakdown lacks the directory's words:\n%s", eval[string](b, `document.querySelector("#failures").textContent`))
	}

	// Readable on a phone: nothing wider than the screen. Kept as a picture.
	probed := want[0]
	for _, s := range want {
		if s.Outcome == "ok" && s.InRegistry {
			probed = s
		}
	}
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(srv.URL+site.ServerPath(probed.SiteKey)))
	if eval[bool](b, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
		t.Error("the server page is wider than a phone's screen")
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("CARDCRAWL_SCREENSHOT_DIR")
	if out == "" {
		out = dir
	}
	name := filepath.Join(out, "server-page-phone.png")
	if err := os.WriteFile(name, shot, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %s", name)

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
}

// allServers lists every server the store has, through the same query the
// index uses.
func allServers(t *testing.T, st *store.DB) []store.SiteRow {
	t.Helper()
	p, err := st.SiteServers(context.Background(), store.SiteFilter{Limit: 200})
	if err != nil || p.Next != nil {
		t.Fatalf("all servers: %v (next %v)", err, p.Next)
	}
	return p.Rows
}

func keys(rows []store.SiteRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, site.ServerPath(r.SiteKey))
	}
	slices.Sort(out)
	return out
}

// browserRun drives one browser tab.
type browserRun struct {
	t       *testing.T
	ctx     context.Context
	base    string
	checked map[string]bool
}

func (b *browserRun) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// follow runs an action that navigates (a click on a link or a submit
// button) and waits for the new page.
func (b *browserRun) follow(a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, a)
	if err != nil {
		b.t.Fatal(err)
	}
	if resp.Status != http.StatusOK {
		b.t.Fatalf("%s: %d", resp.URL, resp.Status)
	}
}

// eval evaluates a script in the page.
func eval[T any](b *browserRun, script string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](script))
	if err != nil {
		b.t.Fatalf("%s: %v", script, err)
	}
	return v
}

func (b *browserRun) exists(sel string) bool {
	b.t.Helper()
	return eval[bool](b, `document.querySelector(`+strconv.Quote(sel)+`) !== null`)
}

// serverLinks returns the paths of the server pages the index shows.
func (b *browserRun) serverLinks() []string {
	b.t.Helper()
	return eval[[]string](b, `[...document.querySelectorAll("a.server")].map(a => a.getAttribute("href"))`)
}

// checkLinks requests every same-origin link of the page (once per test)
// and wants 200 with nosniff, and the CSP on HTML; a link elsewhere must be
// http(s).
func (b *browserRun) checkLinks() {
	b.t.Helper()
	hrefs := eval[[]string](b, `[...document.querySelectorAll("a[href]")].map(a => a.href)`)
	if b.checked == nil {
		b.checked = map[string]bool{}
	}
	for _, h := range hrefs {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			b.t.Errorf("link %q is not a web URL", h)
			continue
		}
		if !strings.HasPrefix(h, b.base+"/") || b.checked[h] {
			continue
		}
		b.checked[h] = true
		resp, err := http.Get(h)
		if err != nil {
			b.t.Errorf("link %s: %v", h, err)
			continue
		}
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		switch {
		case resp.StatusCode != http.StatusOK:
			b.t.Errorf("link %s: %s", h, resp.Status)
		case resp.Header.Get("X-Content-Type-Options") != "nosniff":
			b.t.Errorf("link %s: no nosniff", h)
		case strings.HasPrefix(ct, "text/html") && resp.Header.Get("Content-Security-Policy") != site.CSP:
			b.t.Errorf("link %s: CSP %q", h, resp.Header.Get("Content-Security-Policy"))
		case strings.Contains(h, "/raw/") && ct != "text/plain; charset=utf-8":
			b.t.Errorf("raw document %s served as %q", h, ct)
		}
	}
}
