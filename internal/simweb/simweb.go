// Package simweb is a simulated web for hermetic tests, the offline demo and
// benchmarks: many HTTPS host names served from one loopback TLS listener,
// with certificates issued on demand by a CA generated at start.
//
// Clients reach it the way users reach their own test setups, with curl's
// --connect-to ::127.0.0.1:PORT (every host and port goes to the listener) and
// --ca-cert pointing at the CA written out as PEM, so the code under test never
// knows the web is simulated. Hosts come from txtar-like fixture files
// (see AddFixtures), from Handle (programmatic hosts such as MCP servers) and
// from Generate (a deterministic synthetic web of any size).
package simweb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configures a Web.
type Options struct {
	// Logger receives serving errors and warnings; nil discards them.
	Logger *slog.Logger
	// Addr to listen on; default "127.0.0.1:0". Must be loopback.
	Addr string
	// DiscardRequests stops recording requests (Requests then returns nil),
	// for benchmarks that serve millions of them. MaxConcurrent still works.
	DiscardRequests bool
}

// Request is what the Web recorded about one request it received.
type Request struct {
	Host, Method, Path, Accept, IfNoneMatch, IfModifiedSince, UserAgent string
	Cookie, Authorization                                               string
	At                                                                  time.Time
}

// Web is the simulated web. Configure it (fixtures, handlers, generated
// hosts) before or after Start; it is safe for concurrent use.
type Web struct {
	log     *slog.Logger
	addr    string
	discard bool
	ca      *authority

	mu     sync.RWMutex
	sites  map[string]*site
	gens   []*generator
	faults map[string]fault

	// sleep, when set (tests only), replaces the simulated delays, so
	// tests see them without waiting.
	sleep func(time.Duration)
	// onHang, when set (tests only), hears when a hanging host starts
	// (true) and stops (false) holding a connection.
	onHang func(holding bool)

	dns net.PacketConn // nil until ServeDNS

	recMu    sync.Mutex
	requests []Request
	inflight map[string]map[*flight]struct{}
	peak     map[string]int
	inAll    int
	peakAll  int

	closed    chan struct{}
	closeOnce sync.Once
	srv       *http.Server
	ln        net.Listener
}

// site is everything known about one host name.
type site struct {
	handler http.Handler
	files   map[string]*resource // by path (with query, if the fixture had one)
	mounts  []mount
}

type mount struct {
	path string
	h    http.Handler
}

// New creates a Web with a fresh CA. It does not listen until Start.
func New(opts Options) (*Web, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ca, err := newAuthority(time.Now())
	if err != nil {
		return nil, fmt.Errorf("simweb: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Web{
		log:      log,
		addr:     addr,
		discard:  opts.DiscardRequests,
		ca:       ca,
		sites:    make(map[string]*site),
		faults:   make(map[string]fault),
		inflight: make(map[string]map[*flight]struct{}),
		peak:     make(map[string]int),
		closed:   make(chan struct{}),
	}, nil
}

// Start listens and serves HTTP/1.1 over TLS in the background. HTTP/2 is
// left off on purpose: scripted connection drops need a connection to
// hijack.
func (w *Web) Start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv != nil {
		return errors.New("simweb: already started")
	}
	select {
	case <-w.closed:
		return errors.New("simweb: closed")
	default:
	}
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		return fmt.Errorf("simweb: listen: %w", err)
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			return nil, w.beforeHandshake(hello)
		},
		GetCertificate: w.certificate,
	}
	w.ln = ln
	w.srv = &http.Server{
		Handler:           http.HandlerFunc(w.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		// Handshake failures from clients that rightly distrust a name are
		// expected in tests; keep them out of the way.
		ErrorLog:    slog.NewLogLogger(w.log.Handler(), slog.LevelDebug),
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	srv, tln := w.srv, tls.NewListener(ln, cfg)
	go func() {
		if err := srv.Serve(tln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("simweb: serve", "err", err)
		}
	}()
	return nil
}

// Close stops the listener and the DNS server, closes every connection and
// releases handlers blocked by the stall and hang behaviours.
func (w *Web) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.closed)
		w.mu.RLock()
		srv, dns := w.srv, w.dns
		w.mu.RUnlock()
		if dns != nil {
			_ = dns.Close()
		}
		if srv != nil {
			err = srv.Close()
		}
	})
	if err != nil {
		return fmt.Errorf("simweb: close: %w", err)
	}
	return nil
}

// Addr is the listening address, "127.0.0.1:PORT" (empty before Start).
func (w *Web) Addr() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.ln == nil {
		return ""
	}
	return w.ln.Addr().String()
}

// ConnectTo is the value for --connect-to that sends every host and port to
// the listener, "::127.0.0.1:PORT".
func (w *Web) ConnectTo() string {
	return "::" + w.Addr()
}

// CAPEM is the CA certificate in PEM form.
func (w *Web) CAPEM() []byte {
	return append([]byte(nil), w.ca.pem...)
}

// WriteCA writes the CA certificate as PEM to path.
func (w *Web) WriteCA(path string) error {
	if err := os.WriteFile(path, w.ca.pem, 0o644); err != nil {
		return fmt.Errorf("simweb: write ca: %w", err)
	}
	return nil
}

// CertPool is a pool holding only the CA, for in-process clients.
func (w *Web) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(w.ca.cert)
	return p
}

// Client is an HTTP client for in-process tests that sends every request to
// the listener and trusts only the CA. It neither follows redirects nor keeps
// cookies, so tests see exactly what was served.
func (w *Web) Client() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, w.Addr())
			},
			TLSClientConfig:     &tls.Config{RootCAs: w.CertPool(), MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 64,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Handle serves every path of host with h, ahead of any fixture for that
// host. A port on host is ignored.
func (w *Web) Handle(host string, h http.Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.siteLocked(normalizeHost(host)).handler = h
}

// AddFixtureFile adds the fixtures of one archive file.
func (w *Web) AddFixtureFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("simweb: %w", err)
	}
	if err := w.AddFixtures(b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// AddFixtureDir adds every *.txtar file in dir, in sorted order.
func (w *Web) AddFixtureDir(dir string) error {
	return w.addFixtureFS(os.DirFS(dir), ".", dir)
}

func (w *Web) addFixtureFS(fsys fs.FS, dir, label string) error {
	names, err := fs.Glob(fsys, filepath.ToSlash(filepath.Join(dir, "*.txtar")))
	if err != nil {
		return fmt.Errorf("simweb: %w", err)
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return fmt.Errorf("simweb: %w", err)
		}
		if err := w.AddFixtures(b); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(label, filepath.Base(n)), err)
		}
	}
	return nil
}

// AddFixtures parses a txtar-like archive and adds its files. Each file is
// named host + path; its content is either a body (status 200, Content-Type
// from the extension), or "HTTP NNN" then header lines, an empty line and the
// body, or "SIMWEB-MCP KIND [name=N] [version=V] [tools=K]" to mount an MCP
// server (see MCPHandler) at that path. Pseudo-headers script misbehaviour:
// Simweb-Require-Accept, Simweb-Behavior (stall, hang, drop, drop-once,
// drop-twice) and Simweb-Pad. A name already served is an error.
func (w *Web) AddFixtures(archive []byte) error {
	files, err := parseArchive(archive)
	if err != nil {
		return fmt.Errorf("simweb: %w", err)
	}
	type parsed struct {
		host, path string
		res        *resource
	}
	var all []parsed
	for _, f := range files {
		host, p, err := splitName(f.Name)
		if err != nil {
			return fmt.Errorf("simweb: %w", err)
		}
		res, err := parseResource(f.Name, f.Data)
		if err != nil {
			return fmt.Errorf("simweb: %w", err)
		}
		all = append(all, parsed{host, p, res})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range all {
		s := w.siteLocked(p.host)
		if _, dup := s.files[p.path]; dup || s.hasMount(p.path) {
			return fmt.Errorf("simweb: %w: %s%s defined twice", errFixture, p.host, p.path)
		}
		if p.res.mcpKind == "" {
			s.files[p.path] = p.res
			continue
		}
		if err := w.mountLocked(s, p.host, p.path, p.res); err != nil {
			return err
		}
	}
	return nil
}

func (w *Web) mountLocked(s *site, host, p string, res *resource) error {
	opts := res.mcpOpts
	opts.Path = p
	h, err := MCPHandler(res.mcpKind, opts)
	if err != nil {
		return fmt.Errorf("simweb: %s%s: %w", host, p, err)
	}
	s.mounts = append(s.mounts, mount{path: p, h: h})
	for _, extra := range extraMountPaths(res.mcpKind) {
		if !s.hasMount(extra) {
			s.mounts = append(s.mounts, mount{path: extra, h: h})
		}
	}
	return nil
}

func (s *site) hasMount(p string) bool {
	for _, m := range s.mounts {
		if m.path == p {
			return true
		}
	}
	return false
}

// match finds the mount for a request path: an exact match, or the longest
// mount that is a whole-segment prefix of it.
func (s *site) match(p string) http.Handler {
	var best *mount
	for i := range s.mounts {
		m := &s.mounts[i]
		prefix := strings.TrimSuffix(m.path, "/")
		if p == m.path || p == prefix || strings.HasPrefix(p, prefix+"/") {
			if best == nil || len(m.path) > len(best.path) {
				best = m
			}
		}
	}
	if best == nil {
		return nil
	}
	return best.h
}

func (w *Web) siteLocked(host string) *site {
	s, ok := w.sites[host]
	if !ok {
		s = &site{files: make(map[string]*resource)}
		w.sites[host] = s
	}
	return s
}

func normalizeHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// Requests returns the requests served so far for host ("" = all), in the
// order they arrived.
func (w *Web) Requests(host string) []Request {
	host = normalizeHost(host)
	w.recMu.Lock()
	defer w.recMu.Unlock()
	var out []Request
	for _, r := range w.requests {
		if host == "" || r.Host == host {
			out = append(out, r)
		}
	}
	return out
}

// MaxConcurrent is the peak number of requests in flight at once for host
// ("" = across all hosts).
func (w *Web) MaxConcurrent(host string) int {
	host = normalizeHost(host)
	w.recMu.Lock()
	defer w.recMu.Unlock()
	if host == "" {
		return w.peakAll
	}
	return w.peak[host]
}

// flight is one request a handler is serving.
type flight struct {
	host string
	ctx  context.Context
}

func (w *Web) begin(host string, r *http.Request) *flight {
	w.recMu.Lock()
	defer w.recMu.Unlock()
	if !w.discard {
		p := r.URL.Path
		if r.URL.RawQuery != "" {
			p += "?" + r.URL.RawQuery
		}
		w.requests = append(w.requests, Request{
			Host:            host,
			Method:          r.Method,
			Path:            p,
			Accept:          r.Header.Get("Accept"),
			IfNoneMatch:     r.Header.Get("If-None-Match"),
			IfModifiedSince: r.Header.Get("If-Modified-Since"),
			UserAgent:       r.Header.Get("User-Agent"),
			Cookie:          r.Header.Get("Cookie"),
			Authorization:   r.Header.Get("Authorization"),
			At:              time.Now(),
		})
	}
	// A request whose client has gone is over for that client even if the
	// AfterFunc goroutine that would end it has not run yet: its context
	// is already done. (Over HTTP/1.1, which this server speaks, a client
	// that closed its connection is only noticed when the server reads
	// the close, which can come after the client's next request on a new
	// connection has begun: that is the client's to avoid, by reading a
	// response to its end before it asks again.)
	fs := w.inflight[host]
	if fs == nil {
		fs = make(map[*flight]struct{})
		w.inflight[host] = fs
	}
	for f := range fs {
		if f.ctx.Err() != nil {
			delete(fs, f)
			w.inAll--
		}
	}
	f := &flight{host: host, ctx: r.Context()}
	fs[f] = struct{}{}
	w.peak[host] = max(w.peak[host], len(fs))
	w.inAll++
	w.peakAll = max(w.peakAll, w.inAll)
	return f
}

func (w *Web) end(f *flight) {
	w.recMu.Lock()
	defer w.recMu.Unlock()
	fs := w.inflight[f.host]
	if _, ok := fs[f]; !ok {
		return
	}
	delete(fs, f)
	w.inAll--
	// Drop idle hosts: a run over a million names must not keep one
	// entry per name it ever served (peak, which MaxConcurrent needs,
	// still does).
	if len(fs) == 0 {
		delete(w.inflight, f.host)
	}
}

// serveHTTP routes by Host (falling back to SNI): a programmatic handler
// first, then fixture files, then MCP mounts, then generated hosts.
func (w *Web) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	host := normalizeHost(r.Host)
	if host == "" && r.TLS != nil {
		host = normalizeHost(r.TLS.ServerName)
	}
	f := w.begin(host, r)
	// A request is over for its client once the client has gone, even if
	// the handler takes a moment longer to notice: counting until the
	// handler returns would report a polite client's next request as
	// overlapping.
	stop := context.AfterFunc(r.Context(), func() { w.end(f) })
	defer func() {
		stop()
		w.end(f)
	}()

	w.mu.RLock()
	s := w.sites[host]
	var (
		h   http.Handler
		res *resource
	)
	if s != nil {
		h = s.handler
		if h == nil {
			if r.URL.RawQuery != "" {
				res = s.files[r.URL.Path+"?"+r.URL.RawQuery]
			}
			if res == nil {
				res = s.files[r.URL.Path]
			}
			if res == nil {
				h = s.match(r.URL.Path)
			}
		}
	}
	gens := w.gens
	w.mu.RUnlock()

	switch {
	case h != nil:
		h.ServeHTTP(rw, r)
		return
	case res != nil:
		w.serveResource(rw, r, res)
		return
	}
	for _, g := range gens {
		sub, j, i, ok := g.parse(host)
		if !ok {
			continue
		}
		w.pause(r, g.delay(host, r.URL.Path))
		if !g.serve(rw, r, sub, j, i) {
			notFound(rw)
		}
		return
	}
	notFound(rw)
}

func notFound(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "text/plain")
	rw.WriteHeader(http.StatusNotFound)
	_, _ = rw.Write([]byte("not found\n"))
}
