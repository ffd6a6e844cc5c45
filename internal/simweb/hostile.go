package simweb

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed testdata/hostile/*.txtar testdata/hostile/registry.json
var hostileFS embed.FS

// HostileRegistryURL is where the hostile web serves a Registry v0.1 double
// whose entries carry the hostile strings and URLs, a draft-era server.json
// and names that break when decoded twice.
const HostileRegistryURL = "https://registry.hostile.example"

// HostileCase is one trick of a hostile publisher, served on its own
// domain: crawl Domain to meet it.
type HostileCase struct {
	Domain string
	// Source names where the case comes from: an item of issue 7, or
	// "earlier review" for the cases found before it.
	Source string
	What   string
}

// The sizes of the programmatic cases, as the review that found them
// measured them.
const (
	// manyRemotesMax keeps the card within cardcrawl's default 1 MiB body
	// cap, so it is read, not refused as too large.
	manyRemotesMax  = 1 << 20
	thirdPartyHosts = 1000
	hangingRemotes  = 96
	nestedCatalogs  = 499
	nestedCards     = 1000
	// bombMembers gzip members of bombMemberBytes spaces each: 1 GiB
	// inflated from about 1 MB on the wire.
	bombMembers     = 1024
	bombMemberBytes = 1 << 20
	// trickleBytes is the trickled catalog's length: at a byte a second it
	// would take 17 minutes.
	trickleBytes = 1024
)

var hostileCases = []HostileCase{
	{"many-remotes.hostile.example", "issue 7.1", "one card of just under 1 MiB with about 22,000 remotes (on r.example)"},
	{"thousand-hosts.hostile.example", "issue 7.2", "one card of about 42 KB with 1,000 SSE remotes on 1,000 third-party hosts (sN.example, all 404)"},
	{"sse-hang.hostile.example", "issue 7.2", "one inline card of about 4.5 KB with 96 SSE remotes on 96 hosts (hN.hang.example) that accept requests and never answer"},
	{"nested.hostile.example", "issue 7.2", "a catalog of 499 nested catalogs, each of 1,000 inline cards: 499,000 cards"},
	{"escapes.hostile.example", "issue 7.3", "ESC, BEL, CR, LF, OSC 8, OSC 0, C1 CSI and bidi controls in catalog and card strings, and in a live MCP server's serverInfo at /mcp"},
	{"csv-formulas.hostile.example", "issue 7.4", "card and entry strings starting with =, +, -, @, tab and CR"},
	{"bad-schemes.hostile.example", "issue 7.6", "javascript:, data:, vbscript: and file: URLs in websiteUrl, icons, repository and a remote"},
	{"port-22.hostile.example", "issue 7.10", "a remote on port 22"},
	{"teredo.hostile.example", "issue 7.10", "a remote at the Teredo address 2001:0:4136:e378:8000:63bf:3fff:fdd2"},
	{"draft-server-json.hostile.example", "issue 7.11", "a draft-era server.json (2025-07-09 $schema, version_detail.version) listed as application/mcp-server+json"},
	{"gzip-bomb.hostile.example", "earlier review", "a catalog sent gzip-encoded: about 1 MB that inflates to 1 GiB"},
	{"trickle.hostile.example", "earlier review", "a 1 KiB catalog sent one byte a second (17 minutes) (HostileOptions.TrickleEvery)"},
	{"redirect-loop.hostile.example", "earlier review", "the catalog redirects to loop.hostile.example, which redirects back"},
	{"private-redirect.hostile.example", "earlier review", "cards and a nested catalog that redirect to loopback, private, metadata, CGNAT, NAT64 and plain-http addresses in many spellings"},
	{"wrong-host-cert.hostile.example", "earlier review", "a certificate issued for someone-else.example"},
	{"expired-cert.hostile.example", "earlier review", "a certificate that expired yesterday"},
	{"sse-no-endpoint.hostile.example", "earlier review", "an SSE remote whose stream never sends its endpoint event (POST: 405)"},
}

// HostileCases lists the hostile web's cases, one domain each, in a stable
// order.
func HostileCases() []HostileCase {
	return append([]HostileCase(nil), hostileCases...)
}

// HostileDomains are the domains to crawl to meet every hostile case.
func HostileDomains() []string {
	out := make([]string, len(hostileCases))
	for i, c := range hostileCases {
		out[i] = c.Domain
	}
	return out
}

// HostileOptions configures AddHostile.
type HostileOptions struct {
	// TrickleEvery is the pause before each byte of the trickling catalog;
	// default one second.
	TrickleEvery time.Duration
}

// AddHostile adds the hostile web: every case of HostileCases, served as a
// hostile publisher would, and the Registry double at HostileRegistryURL.
// It returns HostileDomains. The static cases are fixtures in
// testdata/hostile; the big or active ones are built here.
func (w *Web) AddHostile(opts HostileOptions) ([]string, error) {
	every := opts.TrickleEvery
	if every <= 0 {
		every = time.Second
	}
	if err := w.addFixtureFS(hostileFS, "testdata/hostile", "hostile"); err != nil {
		return nil, err
	}
	if err := addRegistry(w, hostileFS, "testdata/hostile/registry.json", HostileRegistryURL); err != nil {
		return nil, err
	}
	w.setFault("wrong-host-cert.hostile.example", faultWrongHostCert)
	w.setFault("expired-cert.hostile.example", faultExpiredCert)

	hang := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.block(r)
		panic(http.ErrAbortHandler) // never a response, not even an empty one
	})
	var hangRemotes []hostileRemote
	for i := range hangingRemotes {
		host := "h" + strconv.Itoa(i) + ".hang.example"
		w.Handle(host, hang)
		hangRemotes = append(hangRemotes, hostileRemote{Type: "sse", URL: "https://" + host})
	}
	escapesMCP, err := MCPHandler(KindGoSDKJSON, MCPOptions{
		Name:    "escapes\u001b[2J\u001b[H\u001b]8;;https://evil.example/\u0007live\u001b]8;;\u0007\r\nFORGED",
		Version: "1.0.0\u001b[8m\u202e",
	})
	if err != nil {
		return nil, fmt.Errorf("simweb: hostile: %w", err)
	}

	for _, add := range []func() error{
		func() error { return w.addCatalogAndCard("many-remotes", sync.OnceValue(manyRemotesCard)) },
		func() error { return w.addCatalogAndCard("thousand-hosts", thousandHostsCard) },
		func() error {
			card := mustCompactJSON(hostileCard{Schema: cardSchema, Name: "example.hostile.sse-hang/silent", Version: "1.0.0",
				Description: "96 SSE remotes that never answer", Remotes: hangRemotes})
			cat := hostileCatalogDoc{SpecVersion: "1.0", Entries: []hostileEntry{{
				Identifier: "urn:air:sse-hang.hostile.example:mcp:silent", Type: mediaCard, Data: card}}}
			return w.addDoc("sse-hang.hostile.example", wellKnown, mediaCatalog, mustCompactJSON(cat))
		},
		func() error { return w.mount("nested.hostile.example", "/", http.HandlerFunc(serveNested)) },
		func() error { return w.mount("escapes.hostile.example", "/mcp", escapesMCP) },
		func() error { return w.mount("gzip-bomb.hostile.example", wellKnown, gzipBomb()) },
		func() error { return w.mount("trickle.hostile.example", wellKnown, w.trickle(every)) },
		func() error { return w.mount("sse-no-endpoint.hostile.example", "/sse", http.HandlerFunc(w.silentSSE)) },
	} {
		if err := add(); err != nil {
			return nil, err
		}
	}
	return HostileDomains(), nil
}

const (
	wellKnown    = "/.well-known/ai-catalog.json"
	mediaCatalog = "application/ai-catalog+json"
	mediaCard    = "application/mcp-server-card+json"
)

type hostileEntry struct {
	Identifier string          `json:"identifier"`
	Type       string          `json:"type"`
	URL        string          `json:"url,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

type hostileCatalogDoc struct {
	SpecVersion string         `json:"specVersion"`
	Entries     []hostileEntry `json:"entries"`
}

type hostileRemote struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type hostileCard struct {
	Schema      string          `json:"$schema"`
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description"`
	Remotes     []hostileRemote `json:"remotes"`
}

// addCatalogAndCard serves NAME.hostile.example's catalog listing one card,
// /card.json, whose body card computes on request.
func (w *Web) addCatalogAndCard(name string, card func() []byte) error {
	host := name + ".hostile.example"
	cat := hostileCatalogDoc{SpecVersion: "1.0", Entries: []hostileEntry{{
		Identifier: "urn:air:" + host + ":mcp:card", Type: mediaCard, URL: "https://" + host + "/card.json"}}}
	if err := w.addDoc(host, wellKnown, mediaCatalog, mustJSON(cat)); err != nil {
		return err
	}
	return w.mount(host, "/card.json", http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		writeBody(rw, mediaCard, card())
	}))
}

func writeBody(rw http.ResponseWriter, ctype string, body []byte) {
	rw.Header().Set("Content-Type", ctype)
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = rw.Write(body)
}

// manyRemotesCard is a card with as many remotes as fit in 1 MiB: short
// URLs on one third-party host, each a distinct endpoint.
func manyRemotesCard() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"$schema":%q,"name":"example.hostile.many-remotes/card","version":"1.0.0","description":"as many remotes as fit in 1 MiB","remotes":[`, cardSchema)
	const end = "]}"
	for i := 0; ; i++ {
		r := `{"type":"sse","url":"https://r.example/` + strconv.Itoa(i) + `"}`
		if i > 0 {
			r = "," + r
		}
		if b.Len()+len(r)+len(end) > manyRemotesMax {
			break
		}
		b.WriteString(r)
	}
	b.WriteString(end)
	return b.Bytes()
}

// thousandHostsCard lists one remote on each of 1,000 third-party hosts.
func thousandHostsCard() []byte {
	c := hostileCard{Schema: cardSchema, Name: "example.hostile.thousand-hosts/card", Version: "1.0.0",
		Description: "1,000 remotes on 1,000 hosts"}
	for i := range thirdPartyHosts {
		c.Remotes = append(c.Remotes, hostileRemote{Type: "sse", URL: "https://s" + strconv.Itoa(i) + ".example"})
	}
	return mustCompactJSON(c)
}

// serveNested serves nested.hostile.example: the root catalog lists 499
// nested catalogs, /nested/N.json, each of 1,000 inline cards, all computed
// on request.
func serveNested(rw http.ResponseWriter, r *http.Request) {
	const host = "nested.hostile.example"
	var cat hostileCatalogDoc
	switch num, ok := strings.CutPrefix(r.URL.Path, "/nested/"); {
	case r.URL.Path == wellKnown:
		cat = hostileCatalogDoc{SpecVersion: "1.0"}
		for n := range nestedCatalogs {
			cat.Entries = append(cat.Entries, hostileEntry{Identifier: "urn:air:" + host + ":catalog:" + strconv.Itoa(n),
				Type: mediaCatalog, URL: "https://" + host + "/nested/" + strconv.Itoa(n) + ".json"})
		}
	case ok && strings.HasSuffix(num, ".json"):
		n, valid := atoi(strings.TrimSuffix(num, ".json"))
		if !valid || n >= nestedCatalogs {
			notFound(rw)
			return
		}
		cat = hostileCatalogDoc{SpecVersion: "1.0"}
		for m := range nestedCards {
			id := fmt.Sprintf("c%d-%d", n, m)
			card := mustCompactJSON(hostileCard{Schema: cardSchema, Name: "example.hostile.nested/" + id, Version: "1.0.0",
				Description: fmt.Sprintf("inline card %d of nested catalog %d", m, n),
				Remotes:     []hostileRemote{{Type: "streamable-http", URL: fmt.Sprintf("https://%s/mcp/%d/%d", host, n, m)}}})
			cat.Entries = append(cat.Entries, hostileEntry{Identifier: "urn:air:" + host + ":mcp:" + id, Type: mediaCard, Data: card})
		}
	default:
		notFound(rw)
		return
	}
	writeBody(rw, mediaCatalog, mustCompactJSON(cat))
}

// gzipBomb serves the same small gzip member of 1 MiB of spaces 1,024
// times: a gzip stream may hold many members, and a client that inflates
// it (Go's does, transparently) gets 1 GiB.
func gzipBomb() http.Handler {
	compress := sync.OnceValue(func() []byte {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			panic(err) // a valid constant level
		}
		_, _ = zw.Write(bytes.Repeat([]byte(" "), bombMemberBytes))
		_ = zw.Close()
		return b.Bytes()
	})
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		member := compress()
		h := rw.Header()
		h.Set("Content-Type", mediaCatalog)
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(bombMembers*len(member)))
		for range bombMembers {
			if _, err := rw.Write(member); err != nil {
				return
			}
		}
	})
}

// trickle sends a valid 1 KiB catalog one byte at a time, pausing every
// before each, so only a client's overall deadline stops it.
func (w *Web) trickle(every time.Duration) http.Handler {
	body := []byte(`{"specVersion": "1.0", "entries": []}`)
	body = append(body, bytes.Repeat([]byte(" "), trickleBytes-len(body)-1)...)
	body = append(body, '\n')
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", mediaCatalog)
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rw.WriteHeader(http.StatusOK)
		f, _ := rw.(http.Flusher)
		for i := range body {
			w.pause(r, every)
			if r.Context().Err() != nil {
				return
			}
			if _, err := rw.Write(body[i : i+1]); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
	})
}

// silentSSE is a legacy SSE endpoint that opens its stream and never
// names the endpoint to post to.
func (w *Web) silentSSE(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		rw.Header().Set("Allow", "GET")
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write([]byte(": connected\n\n"))
	if f, ok := rw.(http.Flusher); ok {
		f.Flush()
	}
	w.block(r)
}

// addDoc serves body with a 200 and ctype at host and path.
func (w *Web) addDoc(host, p, ctype string, body []byte) error {
	res := &resource{status: http.StatusOK, header: http.Header{"Content-Type": {ctype}}, body: body}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.siteLocked(normalizeHost(host))
	if _, dup := s.files[p]; dup || s.hasMount(p) {
		return fmt.Errorf("simweb: %w: %s%s defined twice", errFixture, host, p)
	}
	s.files[p] = res
	return nil
}

// mount serves h at path p of host (and below it), behind host's fixture
// files.
func (w *Web) mount(host, p string, h http.Handler) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.siteLocked(normalizeHost(host))
	if _, dup := s.files[p]; dup || s.hasMount(p) {
		return fmt.Errorf("simweb: %w: %s%s defined twice", errFixture, host, p)
	}
	s.mounts = append(s.mounts, mount{path: p, h: h})
	return nil
}

func mustCompactJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("simweb: marshal hostile document: %v", err)) // fixed types; cannot fail
	}
	return b
}
