package simweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func startHostile(t *testing.T) *Web {
	t.Helper()
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddHostile(HostileOptions{TrickleEvery: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

type testRemote struct{ Type, URL string }

type testCard struct {
	Schema      string `json:"$schema"`
	Name        string
	Title       string
	Description string
	Version     string
	WebsiteURL  string `json:"websiteUrl"`
	Icons       []struct{ Src string }
	Repository  struct{ URL, Source string }
	Remotes     []testRemote
}

type testEntry struct {
	Identifier, DisplayName, Type, URL string
	Data                               json.RawMessage
}

type testCatalog struct {
	Host    struct{ DisplayName string }
	Entries []testEntry
}

// getJSON fetches url, checks its status and content type, and decodes it.
func getJSON(t *testing.T, c *http.Client, url, ctype string, v any) reply {
	t.Helper()
	r := fetch(t, c, url)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), ctype) {
		t.Fatalf("GET %s: %d %q, want 200 %s", url, r.Status, r.Header.Get("Content-Type"), ctype)
	}
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return r
}

// catalogCard follows a catalog's single card entry to its card.
func catalogCard(t *testing.T, c *http.Client, domain string) (testCatalog, testCard, reply) {
	t.Helper()
	var cat testCatalog
	getJSON(t, c, "https://"+domain+wellKnown, "application/", &cat)
	if len(cat.Entries) == 0 || cat.Entries[0].URL == "" {
		t.Fatalf("%s: catalog entries %+v, want a card URL first", domain, cat.Entries)
	}
	var card testCard
	r := getJSON(t, c, cat.Entries[0].URL, "application/", &card)
	return cat, card, r
}

// neverAnswers sends req and checks that no response arrives before the
// Web closes.
func neverAnswers(t *testing.T, w *Web, method, url string) {
	t.Helper()
	written := make(chan struct{})
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { close(written) },
	})
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := freshClient(w).Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		errc <- err
	}()
	<-written
	_ = w.Close()
	if err := <-errc; err == nil {
		t.Errorf("%s %s answered; want no response before Close", method, url)
	}
}

func hostsOf(t *testing.T, remotes []testRemote) map[string]bool {
	t.Helper()
	hosts := map[string]bool{}
	for _, r := range remotes {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatalf("remote %q: %v", r.URL, err)
		}
		hosts[u.Host] = true
	}
	return hosts
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// hostileChecks says, per domain, what a hostile publisher serves there.
var hostileChecks = map[string]func(t *testing.T, w *Web){
	"many-remotes.hostile.example": func(t *testing.T, w *Web) {
		_, card, r := catalogCard(t, w.Client(), "many-remotes.hostile.example")
		if n := len(r.Body); n > 1<<20 || n < 1<<20-64 {
			t.Errorf("card is %d bytes, want just under 1 MiB", n)
		}
		if n := len(card.Remotes); n < 22_000 || len(hostsOf(t, card.Remotes)) != 1 {
			t.Errorf("%d remotes on %d hosts, want about 22,000 on one", n, len(hostsOf(t, card.Remotes)))
		}
		seen := map[string]bool{}
		for _, rm := range card.Remotes {
			seen[rm.URL] = true
		}
		if len(seen) != len(card.Remotes) {
			t.Errorf("%d distinct remote URLs among %d", len(seen), len(card.Remotes))
		}
	},
	"thousand-hosts.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		_, card, r := catalogCard(t, c, "thousand-hosts.hostile.example")
		if n := len(r.Body); n < 40_000 || n > 46_000 {
			t.Errorf("card is %d bytes, want about 42 KB", n)
		}
		if len(card.Remotes) != 1000 || len(hostsOf(t, card.Remotes)) != 1000 {
			t.Errorf("%d remotes on %d hosts, want 1,000 on 1,000", len(card.Remotes), len(hostsOf(t, card.Remotes)))
		}
		if got := fetch(t, c, card.Remotes[999].URL).Status; got != 404 {
			t.Errorf("third-party host: %d, want 404", got)
		}
	},
	"sse-hang.hostile.example": func(t *testing.T, w *Web) {
		var cat testCatalog
		getJSON(t, w.Client(), "https://sse-hang.hostile.example"+wellKnown, mediaCatalog, &cat)
		if len(cat.Entries) != 1 || cat.Entries[0].Data == nil {
			t.Fatalf("entries %+v, want one inline card", cat.Entries)
		}
		var card testCard
		if err := json.Unmarshal(cat.Entries[0].Data, &card); err != nil {
			t.Fatal(err)
		}
		if n := len(cat.Entries[0].Data); n < 4_000 || n > 5_000 {
			t.Errorf("inline card is %d bytes, want about 4.5 KB", n)
		}
		if len(card.Remotes) != 96 || len(hostsOf(t, card.Remotes)) != 96 || card.Remotes[0].Type != "sse" {
			t.Errorf("%d remotes on %d hosts (type %q), want 96 SSE remotes on 96", len(card.Remotes), len(hostsOf(t, card.Remotes)), card.Remotes[0].Type)
		}
		neverAnswers(t, w, http.MethodPost, card.Remotes[95].URL)
	},
	"nested.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		var root testCatalog
		getJSON(t, c, "https://nested.hostile.example"+wellKnown, mediaCatalog, &root)
		if len(root.Entries) != 499 || root.Entries[0].Type != mediaCatalog {
			t.Fatalf("root lists %d entries (first %q), want 499 catalogs", len(root.Entries), root.Entries[0].Type)
		}
		var nested testCatalog
		r := getJSON(t, c, root.Entries[498].URL, mediaCatalog, &nested)
		if len(nested.Entries) != 1000 || nested.Entries[999].Data == nil || len(r.Body) > 1<<20 {
			t.Errorf("last nested catalog: %d entries, %d bytes; want 1,000 inline cards under 1 MiB", len(nested.Entries), len(r.Body))
		}
		var card testCard
		if err := json.Unmarshal(nested.Entries[999].Data, &card); err != nil || card.Name != "example.hostile.nested/c498-999" {
			t.Errorf("inline card %q: %v", card.Name, err)
		}
		for _, p := range []string{"/nested/499.json", "/nested/01.json", "/other"} {
			if got := fetch(t, c, "https://nested.hostile.example"+p).Status; got != 404 {
				t.Errorf("%s: %d, want 404", p, got)
			}
		}
	},
	"escapes.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		cat, card, _ := catalogCard(t, c, "escapes.hostile.example")
		for field, s := range map[string]string{
			"host": cat.Host.DisplayName, "identifier": cat.Entries[0].Identifier, "entry name": cat.Entries[0].DisplayName,
			"name": card.Name, "title": card.Title, "description": card.Description, "version": card.Version,
			"websiteUrl": card.WebsiteURL, "repository source": card.Repository.Source,
		} {
			if !containsAny(s, "\x1b", "\a", "\r", "\n", "\u202e", "\u009b") {
				t.Errorf("%s %q carries no control character", field, s)
			}
		}
		for _, want := range []string{"\x1b]8;;", "\r\n", "\a", "\u202e", "\u2066", "\u009b"} {
			if !strings.Contains(card.Title+card.Description, want) {
				t.Errorf("card title and description lack %q", want)
			}
		}
		_, rpc := postInitialize(t, c, "https://escapes.hostile.example/mcp")
		if rpc == nil || rpc.Result == nil || !strings.Contains(rpc.Result.ServerInfo.Name, "\x1b]8;;") ||
			!strings.Contains(rpc.Result.ServerInfo.Version, "\u202e") {
			t.Errorf("live initialize %+v, want escapes in serverInfo", rpc)
		}
	},
	"csv-formulas.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		cat, card, _ := catalogCard(t, c, "csv-formulas.hostile.example")
		var more testCard
		getJSON(t, c, cat.Entries[1].URL, "application/", &more)
		starts := ""
		for _, s := range []string{cat.Entries[0].DisplayName, card.Title, card.Description, card.Version, more.Title, more.Description, more.Version} {
			starts += s[:1]
		}
		if starts != "==+-@\t\r" {
			t.Errorf("fields start with %q, want =, +, -, @, tab and CR", starts)
		}
	},
	"bad-schemes.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		cat, card, _ := catalogCard(t, c, "bad-schemes.hostile.example")
		var data testCard
		getJSON(t, c, cat.Entries[1].URL, "application/", &data)
		got := []string{card.WebsiteURL, card.Icons[0].Src, card.Icons[1].Src, card.Icons[2].Src, card.Repository.URL, card.Remotes[1].URL,
			data.WebsiteURL, data.Icons[0].Src, data.Repository.URL}
		var schemes []string
		for _, u := range got {
			s, _, _ := strings.Cut(u, ":")
			schemes = append(schemes, s)
		}
		want := []string{"javascript", "javascript", "data", "http", "javascript", "javascript", "data", "vbscript", "file"}
		if diff := cmp.Diff(want, schemes); diff != "" {
			t.Errorf("URL schemes (-want +got):\n%s", diff)
		}
	},
	"port-22.hostile.example": func(t *testing.T, w *Web) {
		_, card, _ := catalogCard(t, w.Client(), "port-22.hostile.example")
		if u, err := url.Parse(card.Remotes[0].URL); err != nil || u.Port() != "22" {
			t.Errorf("remote %q, want port 22", card.Remotes[0].URL)
		}
	},
	"teredo.hostile.example": func(t *testing.T, w *Web) {
		_, card, _ := catalogCard(t, w.Client(), "teredo.hostile.example")
		if u, err := url.Parse(card.Remotes[0].URL); err != nil || !strings.HasPrefix(u.Hostname(), "2001:0:") {
			t.Errorf("remote %q, want a Teredo literal", card.Remotes[0].URL)
		}
	},
	"draft-server-json.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		var cat testCatalog
		getJSON(t, c, "https://draft-server-json.hostile.example"+wellKnown, "application/", &cat)
		var doc map[string]json.RawMessage
		getJSON(t, c, cat.Entries[0].URL, "application/json", &doc)
		if _, ok := doc["version"]; ok || cat.Entries[0].Type != "application/mcp-server+json" ||
			!strings.Contains(string(doc["version_detail"]), `"version"`) || !strings.Contains(string(doc["$schema"]), "2025-07-09") {
			t.Errorf("entry type %q, server.json %v; want version_detail and no version", cat.Entries[0].Type, doc)
		}
	},
	"gzip-bomb.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		c.Transport.(*http.Transport).DisableCompression = true // see the bytes on the wire
		resp, err := c.Get("https://gzip-bomb.hostile.example" + wellKnown)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" || int64(len(raw)) != resp.ContentLength {
			t.Fatalf("%d bytes (%v), Content-Encoding %q, length %d", len(raw), err, resp.Header.Get("Content-Encoding"), resp.ContentLength)
		}
		// 1,024 identical members, each 1 MiB of spaces inflated: 1 GiB,
		// checked without inflating it all.
		member := len(raw) / bombMembers
		if len(raw) > 2<<20 || !bytes.Equal(raw, bytes.Repeat(raw[:member], bombMembers)) {
			t.Fatalf("%d bytes on the wire are not %d identical members", len(raw), bombMembers)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw[:member]))
		if err != nil {
			t.Fatal(err)
		}
		inflated, err := io.ReadAll(zr)
		if err != nil || len(inflated) != 1<<20 || strings.TrimSpace(string(inflated)) != "" {
			t.Errorf("one member inflates to %d bytes (%v), want 1 MiB of spaces", len(inflated), err)
		}
	},
	"trickle.hostile.example": func(t *testing.T, w *Web) {
		delays := recordDelays(w)
		got := fetch(t, w.Client(), "https://trickle.hostile.example"+wellKnown)
		var cat testCatalog
		if err := json.Unmarshal([]byte(got.Body), &cat); got.Status != 200 || len(got.Body) != trickleBytes || err != nil {
			t.Fatalf("%d, %d bytes, %v; want a 1 KiB catalog", got.Status, len(got.Body), err)
		}
		d := delays()
		if len(d) != trickleBytes || d[0] != 3*time.Second || d[trickleBytes-1] != 3*time.Second {
			t.Errorf("%d pauses (first %v), want one of 3s before each byte", len(d), d[0])
		}
	},
	"redirect-loop.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		next := "https://redirect-loop.hostile.example" + wellKnown
		var chain []string
		for range 3 {
			r := fetch(t, c, next)
			if r.Status != 302 {
				t.Fatalf("GET %s: %d, want 302", next, r.Status)
			}
			next = r.Header.Get("Location")
			chain = append(chain, next)
		}
		want := []string{"https://loop.hostile.example/back", "https://redirect-loop.hostile.example" + wellKnown, "https://loop.hostile.example/back"}
		if diff := cmp.Diff(want, chain); diff != "" {
			t.Errorf("redirect chain (-want +got):\n%s", diff)
		}
	},
	"private-redirect.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		var cat testCatalog
		getJSON(t, c, "https://private-redirect.hostile.example"+wellKnown, "application/json", &cat)
		var targets []string
		for _, e := range cat.Entries {
			r := fetch(t, c, e.URL)
			if r.Status/100 != 3 {
				t.Errorf("%s: %d, want a redirect", e.URL, r.Status)
			}
			u, err := url.Parse(r.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			targets = append(targets, u.Scheme+" "+u.Hostname())
		}
		want := []string{"https 127.0.0.1", "https 169.254.169.254", "https 10.0.0.1", "https ::1", "https 0x7f000001",
			"https 2130706433", "https 0177.0.0.1", "https localhost", "https ::ffff:127.0.0.1", "https 100.100.100.200",
			"https 64:ff9b::a9fe:a9fe", "http private-redirect.hostile.example", "https 192.168.0.1"}
		if diff := cmp.Diff(want, targets); diff != "" {
			t.Errorf("redirect targets (-want +got):\n%s", diff)
		}
	},
	"wrong-host-cert.hostile.example": func(t *testing.T, w *Web) {
		_, err := w.Client().Get("https://wrong-host-cert.hostile.example" + wellKnown)
		var he x509.HostnameError
		if !errors.As(err, &he) || he.Certificate.DNSNames[0] != "someone-else.example" {
			t.Errorf("err %v, want a certificate for someone-else.example", err)
		}
	},
	"expired-cert.hostile.example": func(t *testing.T, w *Web) {
		_, err := w.Client().Get("https://expired-cert.hostile.example" + wellKnown)
		var ie x509.CertificateInvalidError
		if !errors.As(err, &ie) || ie.Reason != x509.Expired {
			t.Errorf("err %v, want an expired certificate", err)
		}
	},
	"sse-no-endpoint.hostile.example": func(t *testing.T, w *Web) {
		c := w.Client()
		_, card, _ := catalogCard(t, c, "sse-no-endpoint.hostile.example")
		if card.Remotes[0].Type != "sse" {
			t.Errorf("remote type %q, want sse", card.Remotes[0].Type)
		}
		resp, err := c.Post(card.Remotes[0].URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 405 {
			t.Errorf("POST: %d, want 405", resp.StatusCode)
		}
		resp, err = c.Get(card.Remotes[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET: %d %q, want an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		first := make([]byte, len(": connected\n\n"))
		if _, err := io.ReadFull(resp.Body, first); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
		rest, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(first)+string(rest), "endpoint") {
			t.Errorf("the stream named an endpoint: %q", string(first)+string(rest))
		}
	},
}

// TestHostileCases checks that each hostile domain serves its case as a
// hostile publisher would. How the crawler copes is tested where the caps
// and the sanitising live.
func TestHostileCases(t *testing.T) {
	// Checks that close the Web or change its clock get one of their own.
	ownWeb := map[string]bool{"sse-hang.hostile.example": true, "trickle.hostile.example": true, "sse-no-endpoint.hostile.example": true}
	shared := startHostile(t)
	domains := HostileDomains()
	if len(domains) != len(hostileChecks) {
		t.Errorf("%d hostile domains, %d checks", len(domains), len(hostileChecks))
	}
	for _, d := range domains {
		check, ok := hostileChecks[d]
		if !ok {
			t.Errorf("%s has no check", d)
			continue
		}
		if !strings.HasSuffix(d, ".hostile.example") {
			t.Errorf("%s is not under hostile.example", d)
		}
		t.Run(strings.TrimSuffix(d, ".hostile.example"), func(t *testing.T) {
			w := shared
			if ownWeb[d] {
				w = startHostile(t)
			}
			check(t, w)
		})
	}
}

// TestHostileRegistry: the Registry double serves hostile Registry fields,
// the draft-era shape and names that break when decoded twice.
func TestHostileRegistry(t *testing.T) {
	w := startHostile(t)
	var list struct {
		Servers []struct{ Server map[string]json.RawMessage }
	}
	getJSON(t, w.Client(), HostileRegistryURL+"/v0.1/servers?limit=100", "application/json", &list)
	all := map[string]string{}
	for _, s := range list.Servers {
		var name string
		_ = json.Unmarshal(s.Server["name"], &name)
		b, _ := json.Marshal(s.Server)
		all[name] = string(b)
	}
	for name, want := range map[string]string{
		"example.hostile/escapes\x1b[2J": `\u001b]8;;`,
		"example.hostile/formulas":       `"title":"=HYPERLINK`,
		"example.hostile/bad-schemes":    `"websiteUrl":"javascript:`,
		"example.hostile/draft-era":      `"version_detail":{`,
		"example.hostile/percent%25name": `"version":"1.0.0"`,
		"example.hostile/a%41":           `"version":"1.0.0"`,
	} {
		if !strings.Contains(all[name], want) {
			t.Errorf("%q: %s; want %s in it", name, all[name], want)
		}
	}
	if len(all) != 6 {
		t.Errorf("%d servers, want 6", len(all))
	}
}

func TestAddHostileTwice(t *testing.T) {
	w := startHostile(t)
	if _, err := w.AddHostile(HostileOptions{}); err == nil {
		t.Error("adding the hostile web twice succeeded")
	}
}
