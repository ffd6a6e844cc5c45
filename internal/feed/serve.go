package feed

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/registry/wire"
	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what the server reads: the feed, streamed and paged by the
// store's read model, and its version for ETags.
type Store interface {
	Source
	FeedVersion(ctx context.Context) (string, error)
	FeedEntries(ctx context.Context, q store.EntryQuery) ([]store.FeedEntry, bool, error)
	FeedEntriesNamed(ctx context.Context, q store.NamedQuery) ([]store.FeedEntry, error)
	// FeedEntryPage and CheckEntryRange keep a list page until a write
	// reaches the span of the feed it shows.
	FeedEntryPage(ctx context.Context, q store.EntryQuery) (store.EntryPage, error)
	CheckEntryRange(ctx context.Context, r store.EntryRange) (version string, still bool, err error)
	CountFeedServers(ctx context.Context, q store.FeedQuery) (int, error)
}

// ServerOptions configure Handler.
type ServerOptions struct {
	Store  Store
	Logger *slog.Logger
	// StallTimeout is how long a client may stop reading a feed file before
	// the connection is cut (default 60 s). Each write moves the deadline
	// on, so a big feed can take as long as it needs while the client reads.
	StallTimeout time.Duration
	// MaxAge is the Cache-Control max-age of every document (default 5 s);
	// after it a client revalidates with If-None-Match and gets a 304 while
	// nothing changed.
	MaxAge time.Duration
	// Catalog says who aggregates /.well-known/ai-catalog.json.
	Catalog CatalogOptions
	// Site, when set, serves / and every path the feed does not (the
	// person-facing pages of internal/site) instead of the one-table page.
	Site http.Handler
	// Source is the source a request without a source parameter selects
	// (store.FeedSources; default card).
	Source string
}

// parseFilter reads a request's grade, outcome, source (the server's
// default when it has none) and category.
func (s *server) parseFilter(q url.Values) (store.FeedFilter, error) {
	source := q.Get("source")
	if source == "" {
		source = s.opts.Source
	}
	return ParseFilter(FilterParams{Grade: q.Get("grade"), Outcome: q.Get("outcome"), Source: source,
		Category: q.Get("category"), ListingFinding: q.Get(ListingFindingParam)})
}

// shapeVersion is part of every ETag: a cardcrawl that writes different
// bytes for the same database must not match an old ETag.
const shapeVersion = "f3"

// Handler serves the feed: a read-only Registry v0.1 list API
// (/v0.1/servers, /v0.1/servers/{name}/versions[/{version}]), the feed
// files (one per format, streamed), and a paged, searchable HTML page (/).
// Every document carries an ETag made of the store's change counter. The
// feed files and the page are read from the store when asked; the API's
// answers are kept while that counter stays where it was (answers).
func Handler(opts ServerOptions) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = 60 * time.Second
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 5 * time.Second
	}
	s := &server{opts: opts, answers: newAnswers(maxAnswersMemory),
		storeVersion: &versionReads{read: opts.Store.FeedVersion}}
	mux := http.NewServeMux()
	if opts.Site != nil {
		mux.Handle("/", opts.Site)
	} else {
		mux.HandleFunc("GET /{$}", s.cached(unchecked(s.page), readAnswers))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	for _, f := range Formats {
		mux.HandleFunc("GET "+f.Path, s.cached(unchecked(s.file(f)), readAnswers))
	}
	mux.HandleFunc("GET /v0.1/servers", s.cachedPages(s.list))
	mux.HandleFunc("GET /v0.1/servers/{name}/versions", s.cached(unchecked(s.versions), keepAnswers))
	mux.HandleFunc("GET /v0.1/servers/{name}/versions/{version}", s.cached(unchecked(s.version), keepAnswers))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer is exactly the type it says: a browser must not
		// guess HTML into a feed that carries text from cards.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

type server struct {
	opts         ServerOptions
	answers      *answers
	storeVersion *versionReads
}

// How cached keeps a route's answers (answers): the API's answers are
// small and asked for again and again, and kept for the store version (a
// list page whose query allows it, store.EntryQuery.RangeKeepable, for as
// long as no write reaches the span of the feed it shows: cachedPages).
// The feed files stream, and the page is one person's.
type keepRule int

const (
	readAnswers keepRule = iota
	keepAnswers
)

// unchecked is a handler whose answers hold at the version they were asked
// at only.
func unchecked(h http.HandlerFunc) keptHandler {
	return func(w http.ResponseWriter, r *http.Request) *validity {
		h(w, r)
		return nil
	}
}

// cached answers a request whose If-None-Match names the store's current
// version with 304, before reading anything else; otherwise the document
// is written with that ETag (a list page kept by its span keeps the ETag
// of the version it was read at). A change counter read is one row. With
// keep, the answer comes from, or goes to, s.answers.
func (s *server) cached(h keptHandler, keep keepRule) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.current(w, r)
		if !ok {
			return
		}
		if keep == readAnswers {
			h(w, r)
			return
		}
		s.answers.serveKept(w, r, r.URL.RequestURI(), v, false, h)
	}
}

// cachedPages is cached for the list: its query says whether the page may
// be kept by its span, and the read uses it, so it is parsed once, here.
func (s *server) cachedPages(h func(http.ResponseWriter, *http.Request, store.EntryQuery, error) *validity) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.current(w, r)
		if !ok {
			return
		}
		eq, err := s.listQuery(r.URL.Query())
		s.answers.serveKept(w, r, r.URL.RequestURI(), v, err == nil && eq.RangeKeepable(),
			func(w http.ResponseWriter, r *http.Request) *validity { return h(w, r, eq, err) })
	}
}

// current reads the store's version and sets the response's ETag and
// Cache-Control from it; false when it has answered (a 304, or an error).
func (s *server) current(w http.ResponseWriter, r *http.Request) (string, bool) {
	v, err := s.storeVersion.get(r.Context())
	if err != nil {
		s.fail(w, err)
		return "", false
	}
	etag := etagOf(v)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(s.opts.MaxAge.Seconds())))
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return "", false
	}
	return v, true
}

func etagOf(version string) string { return `"` + version + "-" + shapeVersion + `"` }

// matches is If-None-Match's weak comparison (RFC 9110 13.1.2).
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

func (s *server) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.opts.Logger.Error("reading the feed", "err", err)
	problem(w, http.StatusInternalServerError, "the feed could not be read")
}

func (s *server) file(f Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		filter, err := s.parseFilter(r.URL.Query())
		if err != nil {
			problem(w, http.StatusBadRequest, err.Error())
			return
		}
		w.Header().Set("Content-Type", f.ContentType)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		sw := &stallWriter{w: w, rc: http.NewResponseController(w), stall: s.opts.StallTimeout}
		if err := f.Write(r.Context(), sw, s.opts.Store, WriteOptions{Catalog: s.opts.Catalog, Filter: filter}); err != nil {
			s.opts.Logger.Warn("writing the feed", "format", f.Name, "err", err)
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
	pageSize     = 50
)

// list serves GET /v0.1/servers with the Registry's parameters: limit,
// cursor (opaque; here the last entry served: its card key, or for a
// Registry entry with source registry or all, its registry and name; so a page boundary
// stays put while servers are added before or after it), search (a substring of
// the name, any case), updated_since (RFC 3339; entries changed after it,
// those now gone included, as the Registry includes deleted servers) and
// version (only "latest", which every entry here is); and cardcrawl's
// own grade, outcome, source (registry or all: the cards' entries, then
// those of the Registry entries declaring servers no card declares) and category
// (ParseFilter), which keep the entries with a record that matches, and of
// each only those records. eq and qerr are listQuery's answer for r.
func (s *server) list(w http.ResponseWriter, r *http.Request, eq store.EntryQuery, qerr error) *validity {
	if qerr != nil {
		problem(w, http.StatusBadRequest, qerr.Error())
		return nil
	}
	var err error
	var page store.EntryPage
	if eq.RangeKeepable() {
		page, err = s.opts.Store.FeedEntryPage(r.Context(), eq)
	} else {
		page.Entries, page.More, err = s.opts.Store.FeedEntries(r.Context(), eq)
	}
	if err != nil {
		s.fail(w, err)
		return nil
	}
	entries := page.Entries
	out := wire.ServerList[RegistryEntry]{Servers: make([]RegistryEntry, 0, len(entries))}
	for i := range entries {
		if e, ok := NewRegistryEntry(&entries[i], true); ok {
			out.Servers = append(out.Servers, e)
		}
	}
	if page.More && len(entries) > 0 {
		out.Metadata.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(entries[len(entries)-1].Cursor()))
	}
	out.Metadata.Count = len(out.Servers)
	if page.Version == "" {
		writeServerList(w, &out)
		return nil
	}
	// Read with its version in one transaction: the page is that
	// version's, and keeps its ETag while its span holds (or, when its
	// span is not worth checking, while the store stays at the version).
	w.Header().Set("ETag", etagOf(page.Version))
	writeServerList(w, &out)
	v := &validity{version: page.Version}
	if page.Keep {
		v.check = func(ctx context.Context) (string, bool, error) {
			return s.opts.Store.CheckEntryRange(ctx, page.Range)
		}
	}
	return v
}

// listQuery reads the list's parameters.
func (s *server) listQuery(q url.Values) (store.EntryQuery, error) {
	filter, err := s.parseFilter(q)
	if err != nil {
		return store.EntryQuery{}, err
	}
	eq := store.EntryQuery{Limit: defaultLimit, Search: q.Get("search"), FeedFilter: filter}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return eq, errors.New("limit must be an integer from 1 to 100")
		}
		eq.Limit = n
	}
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(b) == 0 {
			return eq, errors.New("invalid cursor")
		}
		eq.After = string(b)
	}
	if v := q.Get("updated_since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return eq, errors.New("Invalid updated_since format: expected RFC3339 timestamp (e.g., 2025-08-07T13:15:04.280Z)")
		}
		eq.Since = store.FormatTime(t)
	}
	if v := q.Get("version"); v != "" && v != "latest" {
		eq.Limit = 0 // cards have one version each; an exact version is searched by name
	}
	return eq, nil
}

// versions serves GET /v0.1/servers/{name}/versions: every listed card
// claiming the name (names are assertions), the one latest serves first;
// with source registry or all, then, when the Registry's latest, undeleted
// entry of the name declares a server no card does, every version of the
// name it has, newest published first (deleted ones with include_deleted,
// as the Registry's).
// The name arrives percent-encoded ("com.example%2Fweather"); PathValue
// has already decoded it once, and decoding it again would turn a literal
// "%41" into "A" and refuse a name with "%" in it.
func (s *server) versions(w http.ResponseWriter, r *http.Request) {
	entries, ok := s.named(w, r)
	if !ok {
		return
	}
	out := wire.ServerList[RegistryEntry]{Servers: make([]RegistryEntry, 0, len(entries))}
	for i := range entries {
		if e, ok := NewRegistryEntry(&entries[i], true); ok {
			out.Servers = append(out.Servers, e)
		}
	}
	out.Metadata.Count = len(out.Servers)
	writeServerList(w, &out)
}

// version serves GET /v0.1/servers/{name}/versions/{version}: "latest" is
// the first card in feed order claiming the name, or else the Registry's
// latest entry; any other version the first of /versions declaring it.
func (s *server) version(w http.ResponseWriter, r *http.Request) {
	entries, ok := s.named(w, r)
	if !ok {
		return
	}
	want := r.PathValue("version")
	for i := range entries {
		reg := entries[i].Registry
		if want == "latest" && reg != nil && !reg.Latest {
			continue
		}
		if e, ok := NewRegistryEntry(&entries[i], true); ok && (want == "latest" || e.Server.Version == want) {
			writeJSONResponse(w, http.StatusOK, e)
			return
		}
	}
	problem(w, http.StatusNotFound, "Server not found")
}

func (s *server) named(w http.ResponseWriter, r *http.Request) ([]store.FeedEntry, bool) {
	filter, err := s.parseFilter(r.URL.Query())
	if err != nil {
		problem(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	q := store.NamedQuery{Name: r.PathValue("name"), FeedFilter: store.FeedFilter{Source: filter.Source}}
	switch v := r.URL.Query().Get("include_deleted"); v {
	case "", "false":
	case "true":
		q.IncludeDeleted = true
	default:
		problem(w, http.StatusBadRequest, "include_deleted must be true or false, not "+strconv.Quote(v))
		return nil, false
	}
	entries, err := s.opts.Store.FeedEntriesNamed(r.Context(), q)
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	if len(entries) == 0 {
		problem(w, http.StatusNotFound, "Server not found")
		return nil, false
	}
	return entries, true
}

// writeJSONResponse writes an API answer compact, as the Registry does
// (indenting was a fifth of a page's cost).
func writeJSONResponse(w http.ResponseWriter, status int, v any) {
	startJSONResponse(w, status)
	_ = newEncoder(w).Encode(v)
}

// startJSONResponse writes an API answer's status and headers.
func startJSONResponse(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(status)
}

// writeServerList writes a list answer as writeJSONResponse would, without
// reflection over its entries (the list page's largest cost when read
// afresh).
func writeServerList(w http.ResponseWriter, l *wire.ServerList[RegistryEntry]) {
	startJSONResponse(w, http.StatusOK)
	b := append(appendServerList(make([]byte, 0, 64<<10), l), '\n')
	_, _ = w.Write(b)
}

// problem writes an RFC 9457 problem body, as the Registry does.
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Del("ETag")
	w.Header().Del("Cache-Control")
	w.WriteHeader(status)
	enc := newEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(wire.Problem{Title: http.StatusText(status), Status: status, Detail: detail})
}

// pageStyle is the page's only style, allowed by its hash in pageCSP: the
// page runs no script and loads nothing, so even markup that slipped past
// the template's escaping could neither run nor fetch anything.
const pageStyle = `
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f4f4f4}code{font-size:.9em}.conformant{color:#176b2c}.near_conformant{color:#8a6100}.non_conformant{color:#a31515}
form{margin:1rem 0}input{padding:.3rem;min-width:16rem}nav{margin:1rem 0}
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
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>cardcrawl: discovered MCP servers</title>
<style>` + pageStyle + `</style></head><body>
<h1>Discovered MCP servers</h1>
<p>{{.Total}} server(s){{if .Query}} whose name contains “{{.Query}}”{{end}} found through AI Catalogs and MCP Server Cards.
Feeds: <a href="/feed.jsonl">JSONL</a> · <a href="/feed.csv">CSV</a> · <a href="/feed.json">Registry JSON</a> ·
<a href="/.well-known/ai-catalog.json">AI Catalog</a> · API: <a href="/v0.1/servers">/v0.1/servers</a></p>
<form method="get" action="/"><label>Name contains <input type="search" name="q" value="{{.Query}}"></label> <button type="submit">Search</button></form>
<table><thead><tr><th>Endpoint</th><th>Transport</th><th>Name</th><th>Version</th><th>Card</th><th>Listed by</th><th>Probe</th></tr></thead><tbody>
{{range .Records}}<tr><td><code>{{if .Endpoint}}{{.Endpoint}}{{else}}(no remote){{end}}</code></td><td>{{.Transport}}</td>
<td>{{.Name}}{{if .Title}}<br><small>{{.Title}}</small>{{end}}</td><td>{{.Version}}</td>
<td class="{{.Grade}}">{{.Grade}}{{if .CardURL}}<br><small><a href="{{.CardURL}}">card</a></small>{{end}}</td>
<td>{{join .Domains ", "}}</td><td>{{with .Probe}}{{.Outcome}}{{if .ToolCount}} ({{deref .ToolCount}} tools){{end}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table>
<nav>{{if .First}}<a href="{{.First}}">first page</a>{{end}}{{if .Next}} · <a href="{{.Next}}" rel="next">next {{.Size}}</a>{{end}}</nav>
</body></html>
`))

type pageData struct {
	Total   int
	Query   string
	Records []Record
	Size    int
	First   string
	Next    string
}

// page serves the HTML page: pageSize servers at a time in feed order, an
// optional name search (?q=), and a link to the next page whose cursor
// names the last server shown.
func (s *server) page(w http.ResponseWriter, r *http.Request) {
	q := store.FeedQuery{Search: r.URL.Query().Get("q"), Limit: pageSize + 1}
	if c := r.URL.Query().Get("after"); c != "" {
		after, ok := decodePageCursor(c)
		if !ok {
			problem(w, http.StatusBadRequest, "invalid cursor")
			return
		}
		q.After = after
	}
	data := pageData{Query: q.Search, Size: pageSize}
	var last store.FeedCursor
	err := s.opts.Store.EachFeedServer(r.Context(), q, func(fs *store.FeedServer) error {
		if len(data.Records) == pageSize {
			data.Next = pageLink(q.Search, last)
			return nil
		}
		data.Records = append(data.Records, NewRecord(fs))
		last = fs.Cursor()
		return nil
	})
	if err == nil {
		data.Total, err = s.opts.Store.CountFeedServers(r.Context(), store.FeedQuery{Search: q.Search})
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	if q.After != (store.FeedCursor{}) {
		data.First = "/"
		if q.Search != "" {
			data.First = "/?q=" + urlQueryEscape(q.Search)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	if err := pageTemplate.Execute(w, data); err != nil {
		s.opts.Logger.Warn("rendering the page", "err", err)
	}
}

func pageLink(search string, after store.FeedCursor) string {
	link := "/?after=" + base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(after.Kind)+after.Key))
	if search != "" {
		link += "&q=" + urlQueryEscape(search)
	}
	return link
}

func decodePageCursor(c string) (store.FeedCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 2 || (b[0] != '0' && b[0] != '1') {
		return store.FeedCursor{}, false
	}
	return store.FeedCursor{Kind: int(b[0] - '0'), Key: string(b[1:])}, true
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
