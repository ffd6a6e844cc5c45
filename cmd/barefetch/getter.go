package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// getter makes one GET and says how it went: the body of a success, the
// URL it ended at, and the failure class ("" on success).
type getter interface {
	get(ctx context.Context, rawURL, accept string) (body []byte, finalURL, class string)
	close()
}

func newGetter(o options) (getter, error) {
	if o.concurrency < 1 {
		return nil, errors.New("--concurrency must be positive")
	}
	if o.timeout <= 0 {
		return nil, errors.New("--timeout must be positive")
	}
	fo := fetch.Options{UserAgent: o.userAgent, Timeout: o.timeout, ConnectTo: o.connectTo, DNSServer: o.dnsServer,
		HostsInFlight: o.concurrency}
	if len(o.caCerts) > 0 {
		pool, err := fetch.LoadCertPool(o.caCerts...)
		if err != nil {
			return nil, fmt.Errorf("--ca-cert: %w", err)
		}
		fo.RootCAs = pool
	}
	switch o.client {
	case "fetch":
		c, err := fetch.New(fo)
		if err != nil {
			return nil, err
		}
		return fetchGetter{c}, nil
	case "net":
		return newNetGetter(fo)
	}
	return nil, fmt.Errorf("--client must be fetch or net, not %q", o.client)
}

// fetchGetter is cardcrawl's own client: every rule, every cost.
type fetchGetter struct{ c *fetch.Client }

func (f fetchGetter) get(ctx context.Context, rawURL, accept string) ([]byte, string, string) {
	r := f.c.Get(ctx, fetch.Request{URL: rawURL, Accept: accept})
	return r.Body, r.FinalURL, r.Class
}

func (fetchGetter) close() {}

// netGetter is net/http with the transport settings of cardcrawl's client
// and none of its guard: no address checks, no retry. It may only run
// where every connection goes to an address the operator named.
type netGetter struct {
	hc        *http.Client
	transport *http.Transport
	userAgent string
	timeout   time.Duration
	maxBody   int64

	mu    sync.Mutex
	hosts map[string]*hostSlot
}

type hostSlot struct {
	ch   chan struct{}
	refs int
}

func newNetGetter(fo fetch.Options) (*netGetter, error) {
	catchAll := false
	for _, c := range fo.ConnectTo {
		if c.ToHost == "" {
			return nil, fmt.Errorf("--client net: every --connect-to rule must name the host to connect to (%+v does not)", c)
		}
		catchAll = catchAll || (c.FromHost == "" && c.FromPort == "")
	}
	if !catchAll {
		return nil, errors.New("--client net has no address guard, so it needs a --connect-to ::HOST:PORT rule that sends every host to an address you name (a simulated web)")
	}
	var resolver *net.Resolver
	if fo.DNSServer != "" {
		if _, port, err := net.SplitHostPort(fo.DNSServer); err != nil || port == "" {
			return nil, fmt.Errorf("--dns-server %q: want host:port", fo.DNSServer)
		}
		var nd net.Dialer
		resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return nd.DialContext(ctx, network, fo.DNSServer)
		}}
	}
	nd := &net.Dialer{Timeout: fo.Timeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if resolver != nil {
			if _, err := resolver.LookupNetIP(ctx, "ip", strings.TrimSuffix(host, ".")+"."); err != nil {
				return nil, err
			}
		}
		for _, c := range fo.ConnectTo {
			if (c.FromHost == "" || strings.EqualFold(c.FromHost, host)) && (c.FromPort == "" || c.FromPort == port) {
				if c.ToPort != "" {
					port = c.ToPort
				}
				return nd.DialContext(ctx, network, net.JoinHostPort(c.ToHost, port))
			}
		}
		return nil, fmt.Errorf("dial %s: no --connect-to rule matches", addr) // unreachable: a catch-all exists
	}
	// The settings of cardcrawl's transport (internal/fetch), so the two
	// clients differ only in what the guard adds.
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		TLSClientConfig:        fetch.TLSConfig(fo.RootCAs),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    fo.Timeout,
		MaxIdleConns:           fetch.IdleConns(fo.HostsInFlight),
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 256 << 10,
	}
	g := &netGetter{transport: t, userAgent: fo.UserAgent, timeout: fo.Timeout, maxBody: fetch.DefaultMaxBodyBytes,
		hosts: map[string]*hostSlot{}}
	g.hc = &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > fetch.DefaultMaxRedirects {
				return fmt.Errorf("%w: more than %d redirects", fetch.ErrRedirectLimit, fetch.DefaultMaxRedirects)
			}
			return fetch.CheckURL(req.URL.String())
		},
	}
	return g, nil
}

func (g *netGetter) get(ctx context.Context, rawURL, accept string) ([]byte, string, string) {
	// The same URL rules the crawl applies before any request, so both
	// clients are asked for the same GETs.
	if err := fetch.CheckURL(rawURL); err != nil {
		return nil, "", string(fetch.Class(err, 0))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", string(fetch.Class(fmt.Errorf("%w: %v", fetch.ErrInvalidURL, err), 0))
	}
	release, err := g.acquire(ctx, strings.ToLower(u.Hostname()))
	if err != nil {
		return nil, "", string(fetch.Class(err, 0))
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", string(fetch.Class(fmt.Errorf("%w: %v", fetch.ErrInvalidURL, err), 0))
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", g.userAgent)
	resp, err := g.hc.Do(req)
	if err != nil {
		return nil, "", string(fetch.Class(err, 0))
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if class := fetch.Class(nil, resp.StatusCode); class != "" {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, final, string(class)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, min(g.maxBody, math.MaxInt64-1)+1))
	switch {
	case err != nil:
		return nil, final, string(fetch.Class(err, 0))
	case int64(len(body)) > g.maxBody:
		return nil, final, string(fetch.ClassTooLarge)
	}
	return body, final, ""
}

// acquire waits for host's one slot: requests to a host are one at a time.
// Slots are dropped when idle, so memory does not grow with the list.
func (g *netGetter) acquire(ctx context.Context, host string) (func(), error) {
	g.mu.Lock()
	s := g.hosts[host]
	if s == nil {
		s = &hostSlot{ch: make(chan struct{}, 1)}
		g.hosts[host] = s
	}
	s.refs++
	g.mu.Unlock()
	drop := func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if s.refs--; s.refs == 0 {
			delete(g.hosts, host)
		}
	}
	select {
	case s.ch <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
	return func() { <-s.ch; drop() }, nil
}

func (g *netGetter) close() { g.transport.CloseIdleConnections() }

// Limits the crawl applies by default (discover): entries read from one
// catalog, and card fetches per domain.
const (
	maxEntries = 1000
	maxCards   = 500
)

// Media types of entries whose URL the crawl fetches as a card.
const (
	mediaCard       = "application/mcp-server-card+json"
	mediaServerJSON = "application/mcp-server+json"
)

// cardURLs finds the card URLs a catalog lists, resolved against the URL it
// was served from. It is the only parsing barefetch does: entries with a
// card media type (in "type", or the older "mediaType"), a URL and no
// inline data.
func cardURLs(body []byte, final string) []string {
	var doc struct {
		Entries []struct {
			Type      string          `json:"type"`
			MediaType string          `json:"mediaType"`
			URL       string          `json:"url"`
			Data      json.RawMessage `json:"data"`
		} `json:"entries"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	base, err := url.Parse(final)
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range doc.Entries {
		if i == maxEntries || len(out) == maxCards {
			break
		}
		t := e.Type
		if t == "" {
			t = e.MediaType
		}
		t, _, _ = strings.Cut(t, ";")
		t = strings.ToLower(strings.TrimSpace(t))
		if (t != mediaCard && t != mediaServerJSON) || e.URL == "" || e.Data != nil {
			continue
		}
		ref, err := url.Parse(e.URL)
		if err != nil {
			out = append(out, e.URL) // fetched as written, so its refusal is counted
			continue
		}
		out = append(out, base.ResolveReference(ref).String())
	}
	return out
}
