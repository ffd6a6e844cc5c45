// Package probe checks, once and without credentials, whether an endpoint
// named by a server card really speaks MCP: it performs the handshake
// (Streamable HTTP at 2025-06-18, the 2026-07-28 server/discover request, or
// the legacy HTTP+SSE endpoint event), lists tools without ever calling one,
// and classifies every outcome with the evidence that led to it.
//
// The exchange is a small hand-written JSON-RPC-over-HTTP client rather than
// an SDK client, because the SDKs hide the status codes and headers
// (WWW-Authenticate, Retry-After) that the classification needs.
//
// Classification choices made once here:
//   - a 2xx answer whose result lacks protocolVersion or serverInfo is not_mcp;
//   - a legacy SSE stream that opens but sends no endpoint event within
//     SSEWait is a timeout (a client would wait and give up the same way),
//     unless the Streamable HTTP handshake then tried on the same URL tells
//     more: a card that says sse may name a Streamable HTTP server, whose
//     GET stream never sends an endpoint event;
//   - a JSON-RPC error in a 4xx to initialize means a 2026-07-28 server only
//     when it is a modern one (-32020, -32021, -32022 or error.data.supported
//     naming a modern version: server/discover follows), and a refused
//     handshake only when it answers our request id; any other 400, 404 or
//     405 gets the legacy SSE GET, any other 4xx is http_4xx;
//   - a tools/list answered -32601 (method not found) on its first page is
//     the server saying it offers no tools: toolCount 0, not partial. On a
//     later page it breaks a listing under way: partial, toolCount unknown;
//   - a redirect other than 307/308 on a POST is not followed and is not_mcp,
//     since following it would turn the POST into a GET;
//   - a URL the guard refuses before any byte is sent is blocked;
//   - a probe whose context the caller canceled (Ctrl-C) before it finished
//     is canceled, whatever its last step saw, so that callers can refuse to
//     store it; a context deadline is still a timeout.
package probe

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// ProtocolVersion is the version the probe offers in initialize.
const ProtocolVersion = "2025-06-18"

// ModernProtocolVersion is the stateless revision reached through server/discover.
const ModernProtocolVersion = "2026-07-28"

// Outcome classes, stored verbatim; internal/failure's outcome table says
// what each means.
const (
	OutcomeOK                = string(failure.OutcomeOK)
	OutcomeRequiresLogin     = string(failure.OutcomeRequiresLogin)
	OutcomeHTTP4xx           = string(failure.OutcomeHTTP4xx)
	OutcomeConnect           = string(failure.OutcomeConnect)
	OutcomeHTTP5xx           = string(failure.OutcomeHTTP5xx)
	OutcomeTimeout           = string(failure.OutcomeTimeout)
	OutcomeNotMCP            = string(failure.OutcomeNotMCP)
	OutcomeRateLimited       = string(failure.OutcomeRateLimited)
	OutcomeHandshakeRejected = string(failure.OutcomeHandshakeRejected)
	// OutcomeBlocked means the URL was refused by the guard and no request was sent.
	OutcomeBlocked = string(failure.OutcomeBlocked)
	// OutcomeCanceled means the caller's context was canceled (Ctrl-C)
	// before the probe finished: the result says nothing about the server.
	OutcomeCanceled = string(failure.OutcomeCanceled)
)

// Eras name the protocol generation actually used.
const (
	Era2025      = "2025"
	EraModern    = ModernProtocolVersion
	EraLegacySSE = "legacy-sse"
)

// Transports as declared by cards and as used by the probe.
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// Defaults applied by New.
const (
	DefaultClientName   = "cardcrawl"
	DefaultSSEWait      = 10 * time.Second
	DefaultMaxToolPages = 5
	DefaultMaxToolNames = 50
	// DefaultMaxBodyBytes bounds one MCP response (JSON body or SSE stream),
	// and so the longest SSE line: the program's 1 MiB cap on any one
	// document, room for about 10,000 plain tools.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxEvents bounds the SSE events read while waiting for one answer.
	DefaultMaxEvents = 1000
)

// Options configures a Prober. Zero values take the defaults above.
type Options struct {
	// Fetch is the program's one client: it reads OAuth metadata documents
	// and, unless HTTP is set, carries the probe's own requests, so the SSRF
	// guard, the per-host slot, the 15 s bound and the one retry after a
	// dropped connection apply. With both nil a guarded client with the
	// defaults is built; never an unguarded one.
	Fetch *fetch.Client
	// HTTP overrides the client for the probe's own requests (tests); its
	// transport must be a fetch.Client's. Defaults to Fetch.HTTPClient().
	// With HTTP set and Fetch nil, metadata documents are not fetched.
	HTTP *http.Client
	// ClientName and ClientVersion fill clientInfo.
	ClientName    string
	ClientVersion string
	// SSEWait bounds the wait for a legacy endpoint event (default 10s).
	SSEWait time.Duration
	// Timeout, when set, bounds each request, body included, on top of the
	// client's own bound. The program's fetch client already enforces 15 s
	// counted from when the host's slot is ours, which a context here cannot
	// do, so leave it zero there.
	Timeout time.Duration
	// MaxToolPages caps tools/list pages (default 5).
	MaxToolPages int
	// MaxToolNames caps the tool names kept (default 50).
	MaxToolNames int
	// MaxBodyBytes caps every response body read, and every SSE line
	// (default 1 MiB).
	MaxBodyBytes int64
	// MaxEvents caps SSE events read per response (default 1000).
	MaxEvents int
	Logger    *slog.Logger
	Now       func() time.Time
}

// Prober runs probes. It is safe for concurrent use; politeness per host is
// the HTTP client's job.
type Prober struct {
	opts   Options
	client *http.Client // opts.HTTP with the probe's redirect policy
	log    *slog.Logger
	// getDoc fetches OAuth metadata documents; nil skips those fetches.
	getDoc docGetter
}

// New returns a Prober with defaults filled in (see Options.Fetch for the
// client it uses).
func New(opts Options) *Prober {
	if opts.HTTP == nil {
		// Never fall back to an unguarded client: the program's fetch
		// client, or a guarded one with the defaults.
		if opts.Fetch == nil {
			c, err := fetch.New(fetch.Options{Logger: opts.Logger})
			if err != nil {
				opts.HTTP = &http.Client{Transport: failingTransport{err}}
			}
			opts.Fetch = c
		}
		if opts.HTTP == nil {
			opts.HTTP = opts.Fetch.HTTPClient()
		}
	}
	if opts.ClientName == "" {
		opts.ClientName = DefaultClientName
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.SSEWait <= 0 {
		opts.SSEWait = DefaultSSEWait
	}
	if opts.MaxToolPages <= 0 {
		opts.MaxToolPages = DefaultMaxToolPages
	}
	if opts.MaxToolNames <= 0 {
		opts.MaxToolNames = DefaultMaxToolNames
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Prober{opts: opts, client: withRedirectPolicy(opts.HTTP), log: opts.Logger}
	if opts.Fetch != nil {
		p.getDoc = fetchDocs(opts.Fetch)
	}
	return p
}

// withRedirectPolicy copies the client (sharing its transport, hence its
// guard and host slots) and follows only 307/308, which keep the POST and its
// body; any other redirect comes back as the response.
func withRedirectPolicy(c *http.Client) *http.Client {
	cc := *c
	inner := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.Response == nil {
			return http.ErrUseLastResponse
		}
		switch req.Response.StatusCode {
		case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return http.ErrUseLastResponse
		}
		if len(via) >= 3 {
			return http.ErrUseLastResponse
		}
		if inner != nil {
			return inner(req, via)
		}
		return nil
	}
	return &cc
}

// Target is one endpoint to probe.
type Target struct {
	URL string // the endpoint (no template)
	// Transport as declared by the card: "streamable-http", "sse" or ""
	// (unknown: Streamable HTTP first).
	Transport string
}

// Result is everything one probe learned. JSON field names are stable: they
// are stored verbatim and printed by `cardcrawl probe --json`.
type Result struct {
	URL             string          `json:"url"`
	Outcome         string          `json:"outcome"`
	Reason          string          `json:"reason"`
	Partial         bool            `json:"partial,omitempty"`
	Transport       string          `json:"transport,omitempty"`
	Era             string          `json:"era,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ServerName      string          `json:"serverName,omitempty"`
	ServerVersion   string          `json:"serverVersion,omitempty"`
	ServerTitle     string          `json:"serverTitle,omitempty"`
	SessionID       bool            `json:"sessionId,omitempty"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	ToolCount       *int            `json:"toolCount,omitempty"`
	ToolsTruncated  bool            `json:"toolsTruncated,omitempty"`
	ToolNames       []string        `json:"toolNames,omitempty"`
	Discover        *DiscoverInfo   `json:"discover,omitempty"`
	LegacyEndpoint  string          `json:"legacyEndpoint,omitempty"`
	Auth            *AuthInfo       `json:"auth,omitempty"`
	Evidence        []Exchange      `json:"evidence"`
	RoundTrips      int             `json:"roundTrips"`
	LatencyMs       int64           `json:"latencyMs"`
	StartedAt       time.Time       `json:"startedAt"`
}

// Exchange is the evidence of one HTTP exchange.
type Exchange struct {
	// Step names the purpose: initialize, notifications/initialized,
	// tools/list, server/discover, delete, legacy-sse,
	// protected-resource-metadata, authorization-server-metadata.
	Step           string `json:"step"`
	Method         string `json:"method"`
	URL            string `json:"url"`
	Status         int    `json:"status,omitempty"`
	ContentType    string `json:"contentType,omitempty"`
	JSONRPCCode    *int   `json:"jsonrpcCode,omitempty"`
	JSONRPCMessage string `json:"jsonrpcMessage,omitempty"`
	// SupportedVersions is error.data.supported from a JSON-RPC error.
	SupportedVersions []string `json:"supportedVersions,omitempty"`
	RetryAfter        string   `json:"retryAfter,omitempty"`
	Location          string   `json:"location,omitempty"`
	LatencyMs         int64    `json:"latencyMs"`
	// Error is a failure class (connect, timeout, tls, dns, too_large, …)
	// and Detail its text.
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// DiscoverInfo is what a 2026-07-28 server/discover answer said.
type DiscoverInfo struct {
	SupportedVersions []string        `json:"supportedVersions,omitempty"`
	Capabilities      json.RawMessage `json:"capabilities,omitempty"`
	TTLMs             *int64          `json:"ttlMs,omitempty"`
	CacheScope        string          `json:"cacheScope,omitempty"`
	Instructions      bool            `json:"instructions,omitempty"` // present or not; the text is not kept
}

// AuthInfo summarises what a 401/403 said about logging in, without logging in.
type AuthInfo struct {
	Status int `json:"status"`
	// Challenge says a WWW-Authenticate header was present.
	Challenge           bool   `json:"challenge"`
	Scheme              string `json:"scheme,omitempty"`
	ResourceMetadataURL string `json:"resourceMetadataUrl,omitempty"`
	Scope               string `json:"scope,omitempty"`
	Error               string `json:"error,omitempty"`
	ErrorDescription    string `json:"errorDescription,omitempty"`
	// PointsToOAuthMetadata: the challenge names resource metadata, or a
	// protected-resource metadata document was found at a well-known path.
	PointsToOAuthMetadata bool                   `json:"pointsToOAuthMetadata"`
	ProtectedResource     *ProtectedResourceInfo `json:"protectedResource,omitempty"`
	AuthorizationServer   *AuthServerInfo        `json:"authorizationServer,omitempty"`
}

// ProtectedResourceInfo is the RFC 9728 document, summarised.
type ProtectedResourceInfo struct {
	URL                  string   `json:"url"`
	Resource             string   `json:"resource,omitempty"`
	ResourceMatches      bool     `json:"resourceMatches"`
	AuthorizationServers []string `json:"authorizationServers,omitempty"`
	ScopesSupported      []string `json:"scopesSupported,omitempty"`
	BearerMethods        []string `json:"bearerMethods,omitempty"`
	ResourceName         string   `json:"resourceName,omitempty"`
}

// AuthServerInfo is the first authorization server's metadata, summarised.
type AuthServerInfo struct {
	URL    string `json:"url"`
	Source string `json:"source"` // "oauth" (RFC 8414) or "openid"
	Issuer string `json:"issuer,omitempty"`
	// IssuerMatches: the document's issuer equals the one the URL was built from.
	IssuerMatches            bool     `json:"issuerMatches"`
	DynamicRegistration      bool     `json:"dynamicRegistration"`
	ClientIDMetadataDocument bool     `json:"clientIdMetadataDocument"`
	PKCES256                 bool     `json:"pkceS256"`
	ScopesSupported          []string `json:"scopesSupported,omitempty"`
}

// failingTransport answers every request with the error that kept a guarded
// client from being built.
type failingTransport struct{ err error }

func (t failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }
