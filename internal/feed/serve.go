package feed

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Source returns the current records.
type Source func(ctx context.Context) ([]Record, error)

// ServerOptions configure Handler.
type ServerOptions struct {
	Source Source
	Logger *slog.Logger
	// CacheFor is how long one read of the Source serves requests (default
	// 5 s). Paging through /v0.1/servers would otherwise reread the whole
	// database for every page; a few seconds' staleness is the price.
	CacheFor time.Duration
	// Now is the clock (tests inject one). Defaults to time.Now.
	Now func() time.Time
	// StallTimeout is how long a client may stop reading a feed file before
	// the connection is cut (default 60 s). Each write moves the deadline
	// on, so a big feed can take as long as it needs while the client reads.
	StallTimeout time.Duration
	// Catalog says who aggregates /.well-known/ai-catalog.json.
	Catalog CatalogOptions
	// Site, when set, serves / and every path the feed does not (the
	// person-facing pages of internal/site) instead of the one-table page.
	Site http.Handler
}

// Handler serves the feed: a read-only Registry v0.1 list API
// (/v0.1/servers, /v0.1/servers/{name}/versions/latest), the feed files
// (/feed.jsonl, /feed.csv, /feed.json), an AI Catalog of the discovered
// cards (/.well-known/ai-catalog.json), and an HTML page (/).
func Handler(opts ServerOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CacheFor <= 0 {
		opts.CacheFor = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = 60 * time.Second
	}
	s := &server{opts: opts}
	mux := http.NewServeMux()
	if opts.Site != nil {
		mux.Handle("/", opts.Site)
	} else {
		mux.HandleFunc("GET /{$}", s.page)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /feed.jsonl", s.file("jsonl", "application/jsonl"))
	mux.HandleFunc("GET /feed.csv", s.file("csv", "text/csv; charset=utf-8"))
	mux.HandleFunc("GET /feed.json", s.file("json", "application/json"))
	mux.HandleFunc("GET /.well-known/ai-catalog.json", s.file("ai-catalog", "application/ai-catalog+json"))
	mux.HandleFunc("GET /v0.1/servers", s.list)
	mux.HandleFunc("GET /v0.1/servers/{name}/versions/latest", s.latest)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer is exactly the type it says: a browser must not
		// guess HTML into a feed that carries text from cards.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

type server struct {
	opts ServerOptions

	mu      sync.Mutex
	cached  []Record
	expires time.Time
}

func (s *server) records(w http.ResponseWriter, r *http.Request) ([]Record, bool) {
	recs, err := s.read(r.Context())
	if err != nil {
		s.opts.Logger.Error("reading the feed", "err", err)
		problem(w, http.StatusInternalServerError, "the feed could not be read")
		return nil, false
	}
	return recs, true
}

// read returns the cached records, reading the Source again once they are
// older than CacheFor. Concurrent requests share one read.
func (s *server) read(ctx context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.opts.Now(); s.cached == nil || !now.Before(s.expires) {
		recs, err := s.opts.Source(ctx)
		if err != nil {
			return nil, err
		}
		s.cached, s.expires = recs, now.Add(s.opts.CacheFor)
	}
	return s.cached, nil
}

func (s *server) file(format, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		recs, ok := s.records(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		sw := &stallWriter{w: w, rc: http.NewResponseController(w), stall: s.opts.StallTimeout}
		write := func() error { return Write(sw, format, recs) }
		if format == "ai-catalog" {
			cat, _ := DirectoryCatalog(recs, s.opts.Catalog)
			write = func() error { return writeJSON(sw, cat) }
		}
		if err := write(); err != nil {
			s.opts.Logger.Warn("writing the feed", "format", format, "err", err)
		}
	}
}

// stallWriter moves the connection's write deadline on before each write:
// the server's fixed write timeout would cut off a slow reader of a large
// feed, and no deadline would let a client that stopped reading hold the
// connection forever. Deadlines are the network's, on the wall clock.
type stallWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
}

func (s *stallWriter) Write(p []byte) (int, error) {
	// A writer without deadlines (a test recorder) just writes.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	return s.w.Write(p)
}

const (
	defaultLimit = 30
	maxLimit     = 100
)

// list serves GET /v0.1/servers with the Registry's limit/cursor paging.
// Cursors are opaque to clients; here they encode the last card key served.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			problem(w, http.StatusBadRequest, "limit must be an integer from 1 to 100")
			return
		}
		limit = n
	}
	after := ""
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			problem(w, http.StatusBadRequest, "invalid cursor")
			return
		}
		after = string(b)
	}
	recs, ok := s.records(w, r)
	if !ok {
		return
	}
	all := RegistryList(recs)
	var page []RegistryEntry
	started := after == ""
	next := ""
	if !started && !slices.ContainsFunc(all.Servers, func(e RegistryEntry) bool { return entryKey(e) == after }) {
		problem(w, http.StatusBadRequest, "the cursor names a server that is no longer in the feed; start again without a cursor")
		return
	}
	for _, e := range all.Servers {
		key := entryKey(e)
		if !started {
			started = key == after
			continue
		}
		if len(page) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(entryKey(page[len(page)-1])))
			break
		}
		page = append(page, e)
	}
	if page == nil {
		page = []RegistryEntry{}
	}
	meta := map[string]any{"count": len(page)}
	if next != "" {
		meta["nextCursor"] = next
	}
	writeJSONResponse(w, RegistryListing{Servers: page, Metadata: meta})
}

func entryKey(e RegistryEntry) string {
	m, _ := e.Meta[MetaKey].(map[string]any)
	k, _ := m["cardKey"].(string)
	return k
}

// latest serves GET /v0.1/servers/{name}/versions/latest. Several cards may
// claim one name (names are assertions); the first in feed order is served.
// The name arrives percent-encoded ("com.example%2Fweather"); PathValue has
// already decoded it once, and decoding it again would turn a literal "%41"
// into "A" and refuse a name with "%" in it.
func (s *server) latest(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	recs, ok := s.records(w, r)
	if !ok {
		return
	}
	for _, e := range RegistryList(recs).Servers {
		if e.Server["name"] == name {
			writeJSONResponse(w, e)
			return
		}
	}
	problem(w, http.StatusNotFound, "server not found")
}

func writeJSONResponse(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_ = writeJSON(w, v)
}

// problem writes an RFC 9457 problem body, as the Registry does.
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = writeJSON(w, map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
}

// pageStyle is the page's only style, allowed by its hash in pageCSP: the
// page runs no script and loads nothing, so even markup that slipped past
// the template's escaping could neither run nor fetch anything.
const pageStyle = `
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f4f4f4}code{font-size:.9em}.conformant{color:#176b2c}.near_conformant{color:#8a6100}.non_conformant{color:#a31515}
`

var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}()

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"join":  strings.Join,
	"deref": func(n *int) int { return *n },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cardcrawl: discovered MCP servers</title>
<style>` + pageStyle + `</style></head><body>
<h1>Discovered MCP servers</h1>
<p>{{len .}} server(s) found through AI Catalogs and MCP Server Cards.
Feeds: <a href="/feed.jsonl">JSONL</a> · <a href="/feed.csv">CSV</a> · <a href="/feed.json">Registry JSON</a> ·
<a href="/.well-known/ai-catalog.json">AI Catalog</a> · API: <a href="/v0.1/servers">/v0.1/servers</a></p>
<table><thead><tr><th>Endpoint</th><th>Transport</th><th>Name</th><th>Version</th><th>Card</th><th>Listed by</th><th>Probe</th></tr></thead><tbody>
{{range .}}<tr><td><code>{{if .Endpoint}}{{.Endpoint}}{{else}}(no remote){{end}}</code></td><td>{{.Transport}}</td>
<td>{{.Name}}{{if .Title}}<br><small>{{.Title}}</small>{{end}}</td><td>{{.Version}}</td>
<td class="{{.Grade}}">{{.Grade}}{{if .CardURL}}<br><small><a href="{{.CardURL}}">card</a></small>{{end}}</td>
<td>{{join .Domains ", "}}</td><td>{{with .Probe}}{{.Outcome}}{{if .ToolCount}} ({{deref .ToolCount}} tools){{end}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table></body></html>
`))

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	recs, ok := s.records(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	if err := pageTemplate.Execute(w, recs); err != nil {
		s.opts.Logger.Warn("rendering the page", "err", err)
	}
}
