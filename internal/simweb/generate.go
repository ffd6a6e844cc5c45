package simweb

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GenerateOptions shapes a synthetic web.
type GenerateOptions struct {
	// Domains is how many domains to generate, e.g. 10_000.
	Domains int
	// CatalogShare is the fraction that publish a catalog (the rest 404),
	// e.g. 0.3.
	CatalogShare float64
	// CardsPerCatalog is how many card entries each catalog lists, e.g. 2.
	CardsPerCatalog int
	// MCPShare is the fraction of card remotes backed by a real MCP server;
	// the others point to hosts that answer 404.
	MCPShare float64
	// Seed makes the web deterministic: the same seed gives the same names,
	// documents, delays and faults.
	Seed int64

	// Latency delays every response of the generated hosts (404s
	// included), a stand-in for network round trips: Latency plus or minus
	// up to Jitter, uniform, fixed per seed, host and path. A delay below
	// zero is zero.
	Latency, Jitter time.Duration

	// Shares of domains that fail below HTTP, drawn once per domain (a
	// domain's subdomains share its fate) and mutually exclusive, so they
	// must add up to at most 1:
	//
	//   - UnresolvableShare: the Web's DNS server (ServeDNS) answers
	//     NXDOMAIN; clients must resolve through it (cardcrawl
	//     --dns-server), or they never notice;
	//   - RefuseShare: the connection is reset at the ClientHello (class
	//     connect, as a refused connection);
	//   - HangShare: the connection is accepted and never answered, so it
	//     costs the client its full timeout;
	//   - SlowTLSShare: the TLS handshake waits SlowTLSDelay (default 1 s)
	//     before it is answered.
	UnresolvableShare, RefuseShare, HangShare, SlowTLSShare float64
	SlowTLSDelay                                            time.Duration
}

// defaultSlowTLSDelay is SlowTLSDelay when SlowTLSShare is set without it.
const defaultSlowTLSDelay = time.Second

func (o *GenerateOptions) check() error {
	if o.Domains < 0 || o.CardsPerCatalog < 0 {
		return errors.New("negative count")
	}
	shares := []float64{o.CatalogShare, o.MCPShare, o.UnresolvableShare, o.RefuseShare, o.HangShare, o.SlowTLSShare}
	for _, s := range shares {
		if !(s >= 0 && s <= 1) {
			return errors.New("shares must be within [0, 1]")
		}
	}
	if o.UnresolvableShare+o.RefuseShare+o.HangShare+o.SlowTLSShare > 1+1e-9 {
		return errors.New("the unresolvable, refuse, hang and slow-TLS shares add up to more than 1")
	}
	if o.Latency < 0 || o.Jitter < 0 || o.SlowTLSDelay < 0 {
		return errors.New("negative latency, jitter or TLS delay")
	}
	if o.SlowTLSShare > 0 && o.SlowTLSDelay == 0 {
		o.SlowTLSDelay = defaultSlowTLSDelay
	}
	return nil
}

// generatedKinds are the servers behind generated remotes, picked per remote
// by hash so that a probe benchmark meets every streamable flavour.
var generatedKinds = []string{KindGoSDKStateful, KindGoSDKJSON, KindMCPGoStreamable}

// generator serves a synthetic web computed from host names alone, so a
// 100,000-domain web costs a few bytes per domain (the returned names).
type generator struct {
	tag  string // the second-level label shared by all its names
	opts GenerateOptions

	once     sync.Once
	handlers []http.Handler
	err      error
}

// Generate adds a deterministic synthetic web and returns its domain names
// in a stable order. Domain i is "siteI.TAG.example" (TAG derives from the
// seed); a catalog lists cards at https://siteI.TAG.example/mcp/J/server-card,
// whose remote is https://mcpJ.siteI.TAG.example/mcp (a real MCP server) or
// https://goneJ.siteI.TAG.example/mcp (404). Catalogs and cards carry ETags
// and answer conditional requests with 304.
func (w *Web) Generate(opts GenerateOptions) ([]string, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("simweb: generate: %w", err)
	}
	g := newGenerator(opts)
	if opts.MCPShare > 0 && opts.CardsPerCatalog > 0 && opts.CatalogShare > 0 {
		// Fail now rather than serve 501s in the middle of a benchmark.
		if _, err := g.handler(0); err != nil {
			return nil, fmt.Errorf("simweb: generate: %w", err)
		}
	}
	w.mu.Lock()
	for _, o := range w.gens {
		if o.tag == g.tag {
			w.mu.Unlock()
			return nil, fmt.Errorf("simweb: generate: seed %d already generated", opts.Seed)
		}
	}
	w.gens = append(w.gens, g)
	w.mu.Unlock()

	names := make([]string, opts.Domains)
	for i := range names {
		names[i] = g.domain(i)
	}
	return names, nil
}

func newGenerator(opts GenerateOptions) *generator {
	return &generator{tag: fmt.Sprintf("g%08x", uint32(hash64(opts.Seed, "tag"))), opts: opts}
}

func (g *generator) domain(i int) string { return "site" + strconv.Itoa(i) + "." + g.tag + ".example" }

func (g *generator) hasCatalog(i int) bool {
	return unit(hash64(g.opts.Seed, "catalog", i)) < g.opts.CatalogShare
}

func (g *generator) hasMCP(i, j int) bool {
	return unit(hash64(g.opts.Seed, "mcp", i, j)) < g.opts.MCPShare
}

// fault draws domain i's fate: one hash, cut into the shares in a fixed
// order, so the shares stay exclusive and a domain keeps its fate when
// another share changes only if the ones before it do not.
func (g *generator) fault(i int) fault {
	o := &g.opts
	if o.UnresolvableShare+o.RefuseShare+o.HangShare+o.SlowTLSShare == 0 {
		return faultNone
	}
	u := unit(hash64(o.Seed, "fault", i))
	for _, c := range []struct {
		share float64
		f     fault
	}{{o.UnresolvableShare, faultUnresolvable}, {o.RefuseShare, faultRefuse}, {o.HangShare, faultHang}, {o.SlowTLSShare, faultSlowTLS}} {
		if u < c.share {
			return c.f
		}
		u -= c.share
	}
	return faultNone
}

// delay is the simulated round trip of a response: Latency ± Jitter,
// fixed per host and path.
func (g *generator) delay(host, path string) time.Duration {
	d := g.opts.Latency
	if g.opts.Jitter > 0 {
		u := unit(hash64(g.opts.Seed, "latency", host, path))
		d += time.Duration((2*u - 1) * float64(g.opts.Jitter))
	}
	return max(d, 0)
}

func (g *generator) handler(n uint64) (http.Handler, error) {
	g.once.Do(func() {
		for _, k := range generatedKinds {
			h, err := MCPHandler(k, MCPOptions{Name: "simweb-generated-" + k, Version: "1.0.0"})
			if err != nil {
				g.err = err
				return
			}
			g.handlers = append(g.handlers, h)
		}
	})
	if g.err != nil {
		return nil, g.err
	}
	return g.handlers[n%uint64(len(g.handlers))], nil
}

// parse splits "[mcpJ.|goneJ.]siteI.TAG.example" into its parts.
func (g *generator) parse(host string) (sub string, j, i int, ok bool) {
	rest, found := strings.CutSuffix(host, "."+g.tag+".example")
	if !found {
		return "", 0, 0, false
	}
	if first, site, dot := strings.Cut(rest, "."); dot {
		switch {
		case strings.HasPrefix(first, "mcp"):
			sub, first = "mcp", first[3:]
		case strings.HasPrefix(first, "gone"):
			sub, first = "gone", first[4:]
		default:
			return "", 0, 0, false
		}
		if j, ok = atoi(first); !ok {
			return "", 0, 0, false
		}
		rest = site
	}
	num, found := strings.CutPrefix(rest, "site")
	if !found {
		return "", 0, 0, false
	}
	if i, ok = atoi(num); !ok || i >= g.opts.Domains {
		return "", 0, 0, false
	}
	return sub, j, i, true
}

// atoi accepts only canonical non-negative decimals, so each document has
// exactly one name.
func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// serve answers a request for one of the generator's hosts, parsed into
// sub, j and i; false means the document does not exist and the caller
// 404s.
func (g *generator) serve(rw http.ResponseWriter, r *http.Request, sub string, j, i int) bool {
	if !g.hasCatalog(i) {
		return false
	}
	switch sub {
	case "mcp":
		if j >= g.opts.CardsPerCatalog || !g.hasMCP(i, j) || r.URL.Path != "/mcp" {
			return false
		}
		h, err := g.handler(hash64(g.opts.Seed, "kind", i, j))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusNotImplemented)
			return true
		}
		h.ServeHTTP(rw, r)
		return true
	case "gone":
		return false
	}
	var body []byte
	var ctype string
	if r.URL.Path == "/.well-known/ai-catalog.json" {
		body, ctype = g.catalog(i), "application/ai-catalog+json"
	} else if rest, found := strings.CutPrefix(r.URL.Path, "/mcp/"); found {
		num, tail, _ := strings.Cut(rest, "/")
		j, ok := atoi(num)
		if !ok || tail != "server-card" || j >= g.opts.CardsPerCatalog {
			return false
		}
		body, ctype = g.card(i, j), "application/mcp-server-card+json"
	} else {
		return false
	}
	res := &resource{etag: fmt.Sprintf(`"%016x"`, hash64(g.opts.Seed, string(body)))}
	h := rw.Header()
	h.Set("ETag", res.etag)
	h.Set("Cache-Control", "public, max-age=3600")
	if notModified(r, res) {
		rw.WriteHeader(http.StatusNotModified)
		return true
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		_, _ = rw.Write(body)
	}
	return true
}

type genEntry struct {
	Identifier string `json:"identifier"`
	Type       string `json:"type"`
	URL        string `json:"url"`
}

type genCatalog struct {
	SpecVersion string            `json:"specVersion"`
	Host        map[string]string `json:"host"`
	Entries     []genEntry        `json:"entries"`
}

func (g *generator) catalog(i int) []byte {
	d := g.domain(i)
	c := genCatalog{SpecVersion: "1.0", Host: map[string]string{"displayName": "Generated site " + strconv.Itoa(i)}, Entries: []genEntry{}}
	for j := range g.opts.CardsPerCatalog {
		c.Entries = append(c.Entries, genEntry{
			Identifier: fmt.Sprintf("urn:air:%s:mcp:server%d", d, j),
			Type:       "application/mcp-server-card+json",
			URL:        fmt.Sprintf("https://%s/mcp/%d/server-card", d, j),
		})
	}
	return mustJSON(c)
}

type genRemote struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type genCard struct {
	Schema      string      `json:"$schema"`
	Name        string      `json:"name"`
	Version     string      `json:"version"`
	Description string      `json:"description"`
	Remotes     []genRemote `json:"remotes"`
}

func (g *generator) card(i, j int) []byte {
	sub := "gone"
	if g.hasMCP(i, j) {
		sub = "mcp"
	}
	return mustJSON(genCard{
		Schema:      cardSchema,
		Name:        fmt.Sprintf("example.%s.site%d/server%d", g.tag, i, j),
		Version:     "1.0." + strconv.Itoa(j),
		Description: fmt.Sprintf("Generated server %d of site %d", j, i),
		Remotes:     []genRemote{{Type: "streamable-http", URL: fmt.Sprintf("https://%s%d.%s/mcp", sub, j, g.domain(i))}},
	})
}

// cardSchema is the one $schema value a v1 Server Card may carry.
const cardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("simweb: marshal generated document: %v", err)) // fixed types; cannot fail
	}
	return append(b, '\n')
}

// hash64 is a stable hash of a seed and a few parts: the synthetic web must
// be identical across runs and Go versions, so no maphash.
func hash64(seed int64, parts ...any) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	_, _ = h.Write(b[:])
	for _, p := range parts {
		_, _ = fmt.Fprintf(h, "|%v", p)
	}
	// FNV's high bits barely move when only the last byte differs, so mix
	// them (splitmix64's finaliser) before unit() reads them.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 {
	return float64(h>>11) / float64(1<<53)
}
