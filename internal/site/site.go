// Package site serves the pages a person reads: an index of the servers
// with search, filters and paging (/), a page per server (/servers/{key}),
// a summary with counts and the failure breakdown (/summary), and the
// stored documents as plain text (/raw/{sha256}).
//
// Pages are rendered on the server by html/template (every string from a
// card, a catalog, a live server or the Registry is escaped by it), run no
// script and load only their own stylesheet, /site.css, so the Content
// Security Policy allows nothing else. Links from documents are shown only
// when they are http(s) URLs (servercard.IsWebURL, the feed's rule).
//
// A server's key is its kind's letter, a dot, and its subject in base64url
// without padding: "e." + the normalised endpoint URL for an endpoint, "c."
// + the card key for a card that declares no remote. It is stable while
// the server is, and decodes without a lookup table.
package site

import (
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what the pages read.
type Store interface {
	SiteServers(ctx context.Context, f store.SiteFilter) (store.SitePage, error)
	SiteServer(ctx context.Context, key store.SiteKey) (store.SiteDetail, bool, error)
	SiteCounts(ctx context.Context) (store.SiteCounts, error)
	ProbeOutcomeCounts(ctx context.Context, source string) ([]store.OutcomeCount, error)
	SiteDocument(ctx context.Context, sha256 string, max int) (body []byte, size int64, contentType string, ok bool, err error)
}

// Options configure Handler.
type Options struct {
	Store  Store
	Logger *slog.Logger
	// PageSize is how many servers one index page lists (default 30).
	PageSize int
	// Now is the clock the summary's kept count is timed by (time.Now
	// when nil).
	Now func() time.Time
}

// MaxRaw is how many bytes of a stored document /raw/ serves; the crawl
// keeps no document larger than 1 MiB.
const MaxRaw = 1 << 20

// CSP is the policy of every page: nothing but the page's own stylesheet,
// no script, forms only to this server, never framed.
const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// rawCSP sandboxes a raw document opened directly: it is text, but from
// strangers.
const rawCSP = "default-src 'none'; sandbox"

//go:embed templates/*.html static/site.css
var files embed.FS

// Handler serves the pages.
func Handler(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 30
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &server{opts: opts, counts: &summaryCounts{store: opts.Store, now: opts.Now}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /servers/{key}", s.server)
	mux.HandleFunc("GET /summary", s.summary)
	mux.HandleFunc("GET /raw/{sha256}", s.raw)
	mux.HandleFunc("GET /site.css", s.css)
	// Browsers ask for it unprompted; an empty answer keeps a 404 out of
	// the console.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

type server struct {
	opts   Options
	counts *summaryCounts
}

// Key returns the page key of a server (see the package doc).
func Key(k store.SiteKey) string {
	prefix := "e."
	if k.Kind == store.KindCard {
		prefix = "c."
	}
	return prefix + base64.RawURLEncoding.EncodeToString([]byte(k.Subject))
}

// ParseKey reverses Key.
func ParseKey(s string) (store.SiteKey, error) {
	kind := ""
	switch {
	case strings.HasPrefix(s, "e."):
		kind = store.KindEndpoint
	case strings.HasPrefix(s, "c."):
		kind = store.KindCard
	default:
		return store.SiteKey{}, errors.New("a server key starts with e. or c.")
	}
	b, err := base64.RawURLEncoding.DecodeString(s[2:])
	if err != nil || len(b) == 0 {
		return store.SiteKey{}, errors.New("a server key is base64url after its prefix")
	}
	return store.SiteKey{Kind: kind, Subject: string(b)}, nil
}

// ServerPath is the path of a server's page.
func ServerPath(k store.SiteKey) string { return "/servers/" + Key(k) }

// The filter parameters of the index, in the order the form shows them.
var filterParams = []string{"q", "category", "source", "outcome", "grade", "ns", listingFindingParam}

// listingFindingParam is the filter on what a listing's catalog found of
// its entry or its own signature: the name the API and the CLI give it.
const listingFindingParam = feed.ListingFindingParam

// ParseFilter reads the index's query parameters into a store filter: q
// (search), category, source (card or registry), outcome, grade, ns (the
// namespace's verification method), listing-finding (a code a listing
// carries), after (a server key: the page starts
// after it) and limit. Any handler listing servers can use it.
func ParseFilter(q url.Values, pageSize int) (store.SiteFilter, error) {
	f := store.SiteFilter{Q: q.Get("q"), Category: q.Get("category"), Source: q.Get("source"), Outcome: q.Get("outcome"),
		Grade: q.Get("grade"), NSMethod: q.Get("ns"), ListingFinding: q.Get(listingFindingParam), Limit: pageSize}
	if len(f.Q) > 200 {
		return f, errors.New("q is longer than 200 bytes")
	}
	if err := finding.CheckCode(listingFindingParam, f.ListingFinding); err != nil {
		return f, err
	}
	if f.Source != "" && f.Source != store.SourceCard && f.Source != store.SourceRegistry {
		return f, fmt.Errorf("source must be card or registry, not %q", f.Source)
	}
	if a := q.Get("after"); a != "" {
		k, err := ParseKey(a)
		if err != nil {
			return f, fmt.Errorf("after: %w", err)
		}
		f.After = k
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			return f, errors.New("limit must be an integer from 1 to 200")
		}
		f.Limit = n
	}
	return f, nil
}

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))

func (s *server) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", CSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		s.opts.Logger.Error("rendering a page", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (s *server) fail(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, "error.html", map[string]any{"Status": status, "Message": msg})
}

func (s *server) storeFailed(w http.ResponseWriter, what string, err error) {
	s.opts.Logger.Error("reading the database", "what", what, "err", err)
	s.fail(w, http.StatusInternalServerError, "the database could not be read")
}

func (s *server) css(w http.ResponseWriter, _ *http.Request) {
	b, _ := files.ReadFile("static/site.css")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, _ = w.Write(b)
}
