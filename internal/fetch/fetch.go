// Package fetch is the one safe HTTP client of cardcrawl. Every request the
// program makes (catalogs, cards, the Registry API, MCP probes, OAuth
// metadata) goes through it, so the rules live in its transport and dialer:
// https only, no userinfo or placeholders, no connections to loopback,
// private, link-local, CGNAT, multicast or metadata addresses (judged on the
// address actually connected to), no cookies or credentials, an identifying
// User-Agent, a per-request timeout, at most a few re-checked redirects, one
// request at a time per host, and exactly one retry, only after a dropped
// connection. Failures map to short classes through Class.
package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// DefaultUserAgent identifies the crawler and says where to complain.
const DefaultUserAgent = "cardcrawl/0.1 (+https://github.com/cardcrawl/cardcrawl)"

// Defaults applied by New to zero Options fields.
const (
	DefaultTimeout      = 15 * time.Second
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxRedirects = 3
	DefaultRetryWait    = 250 * time.Millisecond
)

// Options configures a Client. Zero values mean the defaults above.
type Options struct {
	UserAgent string // default DefaultUserAgent
	// Timeout bounds each HTTP exchange (one redirect hop, its retry and
	// the reading of its body), counted from when the host's slot is ours.
	Timeout      time.Duration
	MaxBodyBytes int64 // Get's default cap, DefaultMaxBodyBytes
	MaxRedirects int   // default DefaultMaxRedirects
	ConnectTo    []ConnectTo
	RootCAs      *x509.CertPool // nil = system roots
	// RetryWait is the pause before the one retry; 0 means DefaultRetryWait
	// and a negative value means no pause (tests).
	RetryWait time.Duration
	Logger    *slog.Logger // nil discards
	// Resolver lets tests inject DNS; default net.DefaultResolver.
	Resolver *net.Resolver
	// DNSServer ("host:port", UDP with the Go resolver's TCP fallback),
	// when set, is the one server names are resolved through, asked for
	// rooted names (no search domains), and names are looked up even when
	// a ConnectTo rule sends the connection elsewhere: a simulated web can
	// then say a name does not exist (class dns) while the names that do
	// still go where the rule says. Not with Resolver.
	DNSServer string
	// HostsInFlight is how many hosts the caller has requests to at once
	// (its concurrency). Each may keep its connection idle between its
	// requests (a catalog's cards mostly live on the catalog's host), so
	// the client keeps that many idle connections and some to spare, and
	// reuses rather than redials them. 0 counts none: spareIdleConns idle
	// and spareOpenConns open connections are kept.
	HostsInFlight int
	// HostGate, when set, is asked for a host after this client's own
	// per-host slot, so requests are one at a time per host across every
	// process sharing the gate (workers on one database), not only within
	// this one. nil: the in-process slot alone.
	HostGate HostGate
}

// HostGate admits one request at a time per host beyond this process.
// Acquire waits until host is free (and not resting after a Retry-After)
// or ctx ends; release gives it back once the response body is closed,
// told how long the host asked to be left alone (Retry-After on a 429 or
// 503, else 0).
type HostGate interface {
	Acquire(ctx context.Context, host string) (release func(wait time.Duration), err error)
}

// Connections kept between requests, so memory follows the hosts in
// flight, not the number of hosts met: spareIdleConns idle ones beyond one
// for each host in flight, and, HTTP/2 ones included, spareOpenConns open
// ones beyond one in use and one idle for each (past that every idle one is
// closed). When the idle pool held 100 whatever the hosts in flight, a
// crawl at 256 in flight redialled for 44 % of its card fetches and at 512
// for 88 %: each found its host's connection evicted and paid for a new TLS
// handshake.
const (
	spareIdleConns = 100
	spareOpenConns = 256
)

// TLSConfig is the TLS configuration of every connection the client makes
// (and the bare fetcher's, which must make the same handshakes), trusting
// roots (nil: the system's). Its key exchange is classical only: X25519,
// then the NIST curves. Go's default offers a post-quantum hybrid first
// (X25519MLKEM768), which keeps a session's secrets from a quantum computer
// of the future; cardcrawl's sessions carry none (public documents, no
// credentials, no cookies; certificates are checked as before), and
// making and decapsulating the hybrid's key took a sixth of a crawl's CPU
// and a fifth of the bare fetcher's (10,000 domains at 64 in flight, side
// by side: 0.85-0.90 and 0.81-0.84 of the CPU with it; BENCHMARKS.md).
func TLSConfig(roots *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12,
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}}
}

// IdleConns is how many idle connections a client keeps with hostsInFlight
// hosts in flight (its transport's MaxIdleConns).
func IdleConns(hostsInFlight int) int { return max(hostsInFlight, 0) + spareIdleConns }

// openConns is how many connections may be open before the idle ones are
// closed.
func openConns(hostsInFlight int) int64 { return int64(2*max(hostsInFlight, 0) + spareOpenConns) }

// Client is the guarded HTTP client. It is safe for concurrent use; make one
// per program and share it.
type Client struct {
	http         *http.Client
	dialer       *dialer
	transport    *rotating
	slots        *slots
	maxBody      int64
	maxRedirects int
	logger       *slog.Logger
	userAgent    string
}

// UserAgent is the User-Agent the client sends.
func (c *Client) UserAgent() string { return c.userAgent }

// New builds a Client from opts.
func New(opts Options) (*Client, error) {
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.RetryWait == 0 {
		opts.RetryWait = DefaultRetryWait
	}
	if opts.RetryWait < 0 {
		opts.RetryWait = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DNSServer != "" {
		if opts.Resolver != nil {
			return nil, fmt.Errorf("fetch: Resolver and DNSServer are exclusive")
		}
		if _, port, err := net.SplitHostPort(opts.DNSServer); err != nil || port == "" {
			return nil, fmt.Errorf("fetch: dns server %q: want host:port", opts.DNSServer)
		}
		opts.Resolver = serverResolver(opts.DNSServer)
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	switch {
	case opts.Timeout < 0:
		return nil, fmt.Errorf("fetch: negative timeout %v", opts.Timeout)
	case opts.MaxBodyBytes < 0:
		return nil, fmt.Errorf("fetch: negative body cap %d", opts.MaxBodyBytes)
	case opts.MaxRedirects < 0:
		return nil, fmt.Errorf("fetch: negative redirect limit %d", opts.MaxRedirects)
	}
	for _, ct := range opts.ConnectTo {
		for _, p := range []string{ct.FromPort, ct.ToPort} {
			if n, err := strconv.Atoi(p); p != "" && (err != nil || n < 1 || n > 65535) {
				return nil, fmt.Errorf("fetch: connect-to %+v: bad port %q", ct, p)
			}
		}
	}

	d := &dialer{connectTo: opts.ConnectTo, resolver: opts.Resolver, lookupFirst: opts.DNSServer != "",
		timeout: opts.Timeout, logger: opts.Logger, maxOpen: openConns(opts.HostsInFlight)}
	tlsConfig := TLSConfig(opts.RootCAs)
	transport := newRotating(func() *http.Transport {
		return &http.Transport{
			Proxy:                  nil, // an environment proxy would bypass the address checks
			DialContext:            d.DialContext,
			TLSClientConfig:        tlsConfig.Clone(),
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    opts.Timeout,
			MaxIdleConns:           IdleConns(opts.HostsInFlight),
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        30 * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxResponseHeaderBytes: 256 << 10,
		}
	})
	d.closeIdle = transport.CloseIdleConnections
	wait := opts.RetryWait
	retry := &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: noCloseIdle{transport},
			// Redirects are followed by the outer client, hop by hop through
			// the guard, never here.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		Logger:   retryLogger{opts.Logger},
		RetryMax: 1,
		CheckRetry: func(ctx context.Context, _ *http.Response, err error) (bool, error) {
			return ctx.Err() == nil && isDroppedConnection(err) && sends(ctx) < 2, nil
		},
		Backoff: func(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return wait },
		ErrorHandler: func(resp *http.Response, err error, attempts int) (*http.Response, error) {
			if err != nil && attempts > 1 {
				err = fmt.Errorf("after %d attempts: %w", attempts, err)
			}
			return resp, err
		},
	}
	c := &Client{
		dialer:       d,
		transport:    transport,
		slots:        newSlots(),
		maxBody:      opts.MaxBodyBytes,
		maxRedirects: opts.MaxRedirects,
		userAgent:    opts.UserAgent,
		logger:       opts.Logger,
	}
	c.http = &http.Client{
		Transport: &guard{
			next:      &retryablehttp.RoundTripper{Client: retry},
			userAgent: opts.UserAgent,
			timeout:   opts.Timeout,
			slots:     c.slots,
			gate:      opts.HostGate,
		},
		CheckRedirect: c.checkRedirect(nil, false),
		// No Jar: cookies are never stored or sent. No Timeout: the guard
		// times each exchange once the host's slot is ours.
	}
	return c, nil
}

// HTTPClient returns the guarded client for streaming users (Registry API,
// MCP probe). It shares the transport, dialer, per-host slots, timeout,
// retry policy and redirect checks with Get. The host's slot is held from
// the start of a request until its response body is closed, so close each
// body before the next request to the same host. Requests of every method
// are retried once after a dropped connection: no status line arrived, so
// the server answered nothing (an MCP initialize may be sent twice). Each
// call returns a fresh *http.Client, so callers may adjust it for
// themselves.
func (c *Client) HTTPClient() *http.Client {
	hc := *c.http
	return &hc
}

// CheckHost judges, without connecting, whether a request to rawURL would
// be allowed: the URL rules first, then where the host resolves (after
// --connect-to), exactly as the dialer will judge it. Callers that decide
// ahead of time (is an MCP probe warranted?) use it to skip hosts that
// resolve to refused addresses or not at all; the dialer still checks
// again at connect time.
func (c *Client) CheckHost(ctx context.Context, rawURL string) error {
	if err := CheckURL(rawURL); err != nil {
		return err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	_, _, _, err = c.dialer.addresses(ctx, u.Hostname(), port)
	return err
}

// checkRedirect re-judges every hop: the limit, then the target URL, before
// any request is made to it. The transport re-checks the URL and the dialer
// the address as well.
func (c *Client) checkRedirect(record *[]string, noRedirects bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if record != nil {
			*record = append(*record, req.URL.String())
		}
		if noRedirects {
			return fmt.Errorf("%w: redirect to %s not allowed", ErrRedirectLimit, req.URL.Redacted())
		}
		if len(via) > c.maxRedirects {
			return fmt.Errorf("%w: more than %d redirects", ErrRedirectLimit, c.maxRedirects)
		}
		if err := CheckURL(req.URL.String()); err != nil {
			return fmt.Errorf("redirect: %w", err)
		}
		return nil
	}
}

// Request is one document fetch.
type Request struct {
	URL             string
	Accept          string
	IfNoneMatch     string
	IfModifiedSince string
	MaxBytes        int64 // 0 = Options.MaxBodyBytes
	// NoRedirects makes any redirect a failure (class redirect_limit), for
	// fetches whose answer must come from the URL itself (namespace proofs).
	NoRedirects bool
}

// Response is what Get observed. On failure Class and Err say why, and the
// fields that were known (status, headers, redirects) are still filled.
type Response struct {
	URL          string      // as requested
	FinalURL     string      // after redirects
	Redirects    []string    // each hop's Location, resolved, in order (a refused hop included)
	Status       int         // 0 when no response
	Header       http.Header // nil when no response
	ContentType  string
	ETag         string
	LastModified string
	MaxAge       *int          // Cache-Control max-age seconds; nil when absent; no-store/no-cache → 0
	Body         []byte        // nil on failure or 304
	SHA256       string        // hex of Body
	Duration     time.Duration // from the call to the end of the body
	NotModified  bool          // 304
	Class        string        // "" on success or 304, else a failure.Class
	Err          error         // nil on success; a *StatusError for status failures
}

// statusDrainBytes is how much of a failed status's body is read before
// closing, so the connection can usually be reused.
const statusDrainBytes = 4 << 10

// Get fetches one document with the client's rules. It never returns nil and
// never panics; a URL that fails CheckURL makes no request at all.
func (c *Client) Get(ctx context.Context, r Request) (resp *Response) {
	start := time.Now()
	resp = &Response{URL: r.URL}
	defer func() {
		if p := recover(); p != nil {
			// A crawl of untrusted input must go on; the panic is recorded as
			// this URL's failure and logged as the bug it is.
			c.logger.Error("fetch panicked", "url", r.URL, "panic", p)
			resp.Body, resp.SHA256 = nil, ""
			resp.Err = fmt.Errorf("internal error: %v", p)
		}
		resp.Duration = time.Since(start)
		resp.Class = string(Class(resp.Err, resp.Status))
		c.logger.Debug("fetch", "url", r.URL, "status", resp.Status, "class", resp.Class,
			"bytes", len(resp.Body), "duration", resp.Duration)
	}()

	if err := CheckURL(r.URL); err != nil {
		resp.Err = err
		return resp
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		resp.Err = fmt.Errorf("%w: %w", ErrInvalidURL, err)
		return resp
	}
	for name, v := range map[string]string{
		"Accept": r.Accept, "If-None-Match": r.IfNoneMatch, "If-Modified-Since": r.IfModifiedSince,
	} {
		if v != "" {
			req.Header.Set(name, v)
		}
	}
	hc := *c.http
	hc.CheckRedirect = c.checkRedirect(&resp.Redirects, r.NoRedirects)

	hr, err := hc.Do(req)
	if hr != nil {
		// On a refused redirect the client hands back the last response,
		// body closed; keep what it tells.
		c.fillMeta(resp, hr)
	}
	if err != nil {
		resp.Err = err
		if hr != nil {
			hr.Body.Close()
		}
		return resp
	}
	defer hr.Body.Close()

	switch {
	case hr.StatusCode == http.StatusNotModified:
		resp.NotModified = true
		return resp
	case Class(nil, hr.StatusCode) != "":
		resp.Err = &StatusError{Code: hr.StatusCode}
		io.Copy(io.Discard, io.LimitReader(hr.Body, statusDrainBytes))
		return resp
	}

	limit := r.MaxBytes
	if limit <= 0 {
		limit = c.maxBody
	}
	// One byte past the cap tells "exactly the cap" from "more".
	body, err := io.ReadAll(io.LimitReader(hr.Body, min(limit, math.MaxInt64-1)+1))
	switch {
	case err != nil:
		resp.Err = fmt.Errorf("read body: %w", err)
	case int64(len(body)) > limit:
		resp.Err = fmt.Errorf("%w: more than %d bytes", ErrBodySizeLimit, limit)
	default:
		sum := sha256.Sum256(body)
		resp.Body, resp.SHA256 = body, hex.EncodeToString(sum[:])
	}
	return resp
}

func (c *Client) fillMeta(resp *Response, hr *http.Response) {
	resp.Status = hr.StatusCode
	resp.Header = hr.Header
	resp.ContentType = hr.Header.Get("Content-Type")
	resp.ETag = hr.Header.Get("ETag")
	resp.LastModified = hr.Header.Get("Last-Modified")
	resp.MaxAge = parseMaxAge(hr.Header.Values("Cache-Control"))
	if hr.Request != nil && hr.Request.URL != nil {
		resp.FinalURL = hr.Request.URL.String()
	}
}

// maxAgeCap is the largest delta-seconds RFC 9111 §1.2.2 asks caches to
// handle; larger values are read as this.
const maxAgeCap = 1 << 31

// parseMaxAge reads Cache-Control max-age. no-store and no-cache win and
// mean 0 (revalidate every time); an invalid max-age means 0 too, as RFC
// 9111 §4.2.1 treats it as stale.
func parseMaxAge(values []string) *int {
	var (
		maxAge  *int
		noCache bool
	)
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				noCache = true
			case "max-age":
				if maxAge != nil {
					continue // the first one counts
				}
				n := 0
				val = strings.Trim(strings.TrimSpace(val), `"`)
				if val != "" && strings.Trim(val, "0123456789") == "" {
					u, err := strconv.ParseUint(val, 10, 64)
					if err != nil || u > maxAgeCap {
						u = maxAgeCap
					}
					n = int(u)
				}
				maxAge = &n
			}
		}
	}
	if noCache {
		zero := 0
		return &zero
	}
	return maxAge
}
