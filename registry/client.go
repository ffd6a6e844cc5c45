package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// PageLimit is the largest page the Registry serves (limit=101 is a 422).
const PageLimit = 100

// StatusError is a non-2xx answer from the registry, with the RFC 9457
// problem detail when the body carried one.
type StatusError struct {
	URL    string
	Status int
	Title  string
	Detail string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("registry answered %d for %s", e.Status, e.URL)
	if e.Detail != "" {
		msg += ": " + e.Detail
	} else if e.Title != "" {
		msg += ": " + e.Title
	}
	return msg
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// BaseURL is the registry root, e.g. DefaultBaseURL.
	BaseURL string
	// HTTPClient is the one guarded client of the program (internal/fetch),
	// or an httptest client in tests. Required.
	// Its transport sets the program's User-Agent on every request.
	HTTPClient *http.Client
	// RequestsPerSecond caps the request rate: 0 means the polite default
	// of 2; a negative value disables the cap (benchmarks against a local
	// double).
	RequestsPerSecond float64
	// MaxRetries bounds retries of one request after 429 or 5xx (default 4).
	MaxRetries int
	// MaxRetryWait is the longest single wait the client accepts; a
	// Retry-After asking for more fails the request instead (default 2m).
	MaxRetryWait time.Duration
	// MaxBodyBytes caps one response (default 32 MiB).
	MaxBodyBytes int64
	// Sleep waits for d or until ctx ends; tests inject one that records
	// waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Client talks to one registry's v0.1 read API, politely: one request at a
// time, a rate cap, and Retry-After honoured on 429 and 503.
type Client struct {
	base     *url.URL
	opts     ClientOptions
	interval time.Duration
	next     time.Time
}

// NewClient checks opts and builds a Client.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.HTTPClient == nil {
		return nil, errors.New("registry client: no http client")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("registry client: bad base url %q", opts.BaseURL)
	}
	// The fetch guard refuses anything but https; saying so here turns a
	// slow failure at the first request into an immediate usage error.
	if base.Scheme != "https" {
		return nil, fmt.Errorf("registry client: base url %q is not https", opts.BaseURL)
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 4
	}
	if opts.MaxRetryWait == 0 {
		opts.MaxRetryWait = 2 * time.Minute
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 32 << 20
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{base: base, opts: opts}
	switch {
	case opts.RequestsPerSecond == 0:
		c.interval = 500 * time.Millisecond
	case opts.RequestsPerSecond > 0:
		c.interval = time.Duration(float64(time.Second) / opts.RequestsPerSecond)
	}
	return c, nil
}

// BaseURL is the registry root this client talks to (no trailing slash).
func (c *Client) BaseURL() string { return c.base.String() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ListQuery is the query of GET /v0.1/servers.
type ListQuery struct {
	Cursor         string
	Limit          int // 0 means PageLimit
	UpdatedSince   string
	IncludeDeleted bool
	Version        string
	Search         string
}

// Response is one successfully parsed page and when the server said it
// produced it.
type Response struct {
	Page
	// Date is the server's Date header (zero if absent or unparseable).
	Date time.Time
	URL  string
}

// ListServers fetches one page of GET /v0.1/servers.
func (c *Client) ListServers(ctx context.Context, q ListQuery) (*Response, error) {
	return c.getPage(ctx, "/v0.1/servers", q.values())
}

func (q ListQuery) values() url.Values {
	v := url.Values{}
	limit := q.Limit
	if limit <= 0 || limit > PageLimit {
		limit = PageLimit
	}
	v.Set("limit", strconv.Itoa(limit))
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.UpdatedSince != "" {
		v.Set("updated_since", q.UpdatedSince)
	}
	if q.IncludeDeleted || q.UpdatedSince != "" {
		v.Set("include_deleted", "true")
	}
	if q.Version != "" {
		v.Set("version", q.Version)
	}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	return v
}

// Versions fetches every version of one server (the endpoint does not
// paginate). The name's slash is sent as %2F, as the route requires.
func (c *Client) Versions(ctx context.Context, name string) (*Response, error) {
	return c.getPage(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions", url.Values{"include_deleted": {"true"}})
}

func (c *Client) getPage(ctx context.Context, path string, q url.Values) (*Response, error) {
	raw, err := c.getRaw(ctx, path, q)
	if err != nil {
		return nil, err
	}
	return raw.parse(), nil
}

// rawResponse is a fetched page whose entries are not parsed yet.
type rawResponse struct {
	rawPage
	date time.Time
	url  string
}

func (r *rawResponse) parse() *Response {
	return &Response{Page: r.rawPage.parse(), Date: r.date, URL: r.url}
}

// listRaw is ListServers without parsing the entries.
func (c *Client) listRaw(ctx context.Context, q ListQuery) (*rawResponse, error) {
	return c.getRaw(ctx, "/v0.1/servers", q.values())
}

func (c *Client) getRaw(ctx context.Context, path string, q url.Values) (*rawResponse, error) {
	u := *c.base
	// RawPath keeps %2F in names; Path alone would re-escape or decode it.
	u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("registry request path %q: %w", path, err)
	}
	u.Path = p
	u.RawQuery = q.Encode()
	body, hdr, err := c.get(ctx, u.String())
	if err != nil {
		return nil, err
	}
	page, err := parseEnvelope(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.String(), err)
	}
	r := &rawResponse{rawPage: page, url: u.String()}
	if d, err := http.ParseTime(hdr.Get("Date")); err == nil {
		r.date = d.UTC()
	}
	return r, nil
}

// get performs one GET with the rate cap and retries, returning the body of
// a 2xx answer.
func (c *Client) get(ctx context.Context, u string) ([]byte, http.Header, error) {
	for attempt := 0; ; attempt++ {
		if err := c.pace(ctx); err != nil {
			return nil, nil, err
		}
		status, hdr, body, err := c.do(ctx, u)
		if err == nil && status >= 200 && status < 300 {
			return body, hdr, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var failure error
		if err != nil {
			failure = &TransportError{URL: u, Err: err}
		} else {
			failure = problem(u, status, body)
		}
		if !askedToRetry(err, status) || attempt >= c.opts.MaxRetries {
			return nil, nil, failure
		}
		wait := backoff(attempt)
		if err == nil && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
			if ra, ok := fetch.RetryAfter(hdr.Get("Retry-After"), c.opts.Now()); ok {
				wait = ra
			}
		}
		if wait > c.opts.MaxRetryWait {
			return nil, nil, fmt.Errorf("%w (asked to wait %s, more than the %s allowed)", failure, wait, c.opts.MaxRetryWait)
		}
		c.opts.Logger.Info("registry retry", "url", u, "status", status, "wait", wait, "attempt", attempt+1)
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
	}
}

// TransportError is a request that got no usable answer: refused by the
// fetch guard, or failed on the way (DNS, connect, TLS, timeout, a dropped
// connection, an oversized body).
type TransportError struct {
	URL string
	Err error
}

func (e *TransportError) Error() string { return fmt.Sprintf("registry request %s: %v", e.URL, e.Err) }

// Unwrap gives errors.Is and fetch.Class the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// askedToRetry is the client's own retry rule: only a 429 or 503, the
// answers by which a server asks to be called again (Retry-After honoured).
// A dropped connection was already retried once by the fetch client, the
// program's one retry; other failures stop the sync, which keeps its
// progress and resumes next time.
func askedToRetry(err error, status int) bool {
	return err == nil && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable)
}

// Transient reports whether err, returned by a Client, may clear if the
// same request is sent later. The failure table decides: a 429 or 5xx
// answer, and the network failing (refused, reset or dropped connections,
// DNS, timeouts) are temporary; a TLS failure, a body over the cap, a
// refusal by the fetch guard, another 4xx or a page that is no list are not.
func Transient(err error) bool { return ErrorClass(err).Transient() }

// ErrorClass names the failure class of an error returned by a Client:
// the fetch class of a transport failure or of an answer's status, not_json
// or invalid_document for a body that is not a list page, and failure.None
// for anything else (a canceled context, say).
func ErrorClass(err error) failure.Class {
	var se *StatusError
	if errors.As(err, &se) {
		return fetch.Class(nil, se.Status)
	}
	var te *TransportError
	if errors.As(err, &te) {
		return fetch.Class(te.Err, 0)
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return failure.NotJSON
	case errors.Is(err, ErrNotEnvelope), errors.As(err, &typ):
		return failure.InvalidDocument
	}
	return failure.None
}

func backoff(attempt int) time.Duration {
	return time.Second << min(attempt, 6)
}

// pace keeps requests at least one interval apart.
func (c *Client) pace(ctx context.Context) error {
	if c.interval <= 0 {
		return ctx.Err()
	}
	now := c.opts.Now()
	if wait := c.next.Sub(now); wait > 0 {
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return err
		}
		now = c.next
	}
	c.next = now.Add(c.interval)
	return nil
}

func (c *Client) do(ctx context.Context, u string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBodyBytes+1))
	if err != nil {
		return resp.StatusCode, resp.Header, nil, err
	}
	if int64(len(body)) > c.opts.MaxBodyBytes {
		return resp.StatusCode, resp.Header, nil, fetch.ErrBodySizeLimit
	}
	return resp.StatusCode, resp.Header, body, nil
}

// problem turns an error answer into a StatusError, reading the RFC 9457
// body when there is one.
func problem(u string, status int, body []byte) error {
	e := &StatusError{URL: u, Status: status}
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Message  string `json:"message"`
			Location string `json:"location"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &p) == nil {
		e.Title, e.Detail = p.Title, p.Detail
		for _, fe := range p.Errors {
			e.Detail += "; " + fe.Location + ": " + fe.Message
		}
	} else if s := strings.TrimSpace(string(body)); s != "" && len(s) < 200 {
		e.Detail = s
	}
	return e
}
